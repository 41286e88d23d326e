// `stock-in <businessId>`: each invoice's stock, once or redrawn until nothing waits.
import { setTimeout as sleep } from 'node:timers/promises';
import { StockInNotStartedError, type StockInClient } from '../client/stock-in.js';
import { parseStockInBusinessId } from '../client/stock-in-input.js';
import { wholeNumber, type CliCommand } from './command.js';
import { UsageError } from './client-command.js';
import { print, printJson, withJson, withStockIn, type CommonOptions } from './stock-in-shared.js';
import { progressBar, settled, stockInReport } from './stock-in-view.js';

/** Redraws until nothing waits; a read that fails (a worker restarting) is said, and the next one tries again. */
async function watch(stockIn: StockInClient, businessId: string, everySeconds: number): Promise<number> {
  const tty = process.stdout.isTTY === true;
  let state = await stockIn.state(businessId);
  let drawn = '';
  let note = '';
  for (;;) {
    const frame = [...stockInReport(state), '', progressBar(state)].join('\n');
    if (tty) {
      const footer = `watching every ${everySeconds} s; Ctrl-C to stop${note ? `\n${note}` : ''}`;
      process.stdout.write(`\x1b[H\x1b[2J${frame}\n\n${footer}\n`);
    } else if (frame !== drawn) {
      console.log(`${frame}\n`);
    }
    drawn = frame;
    if (settled(state).waiting === 0) return 0;
    await sleep(everySeconds * 1000);
    try {
      state = await stockIn.state(businessId);
      note = '';
    } catch (err) {
      if (err instanceof StockInNotStartedError) throw err;
      note = `not read at ${new Date().toISOString()}: ${err instanceof Error ? err.message : String(err)}`;
      if (!tty) console.error(note);
    }
  }
}

export function addStockInCommand(program: CliCommand): void {
  const stockInCommand = program
    .command('stock-in')
    .description(
      "each confirmed supplier invoice's stock: added, waiting for a mapping, not stock, before the start date, " +
        'taken back; then every waiting line with the items it may be',
    )
    .argument('<businessId>')
    .option('--watch', 'redraw with a progress bar until nothing waits (Ctrl-C to stop)')
    .option('--every <seconds>', 'with --watch: seconds between reads (default 2)', wholeNumber('--every', 3600));
  withJson(stockInCommand).act<CommonOptions & { watch?: boolean; every?: number }>(async ([businessId], options) => {
    const id = parseStockInBusinessId(businessId);
    if (options.watch && options.json) throw new UsageError('--watch draws text: leave out --json');
    if (options.every === 0) throw new UsageError('--every must be at least 1 second');
    return withStockIn(options, async (stockIn) => {
      if (options.watch) return watch(stockIn, id, options.every ?? 2);
      const state = await stockIn.state(id);
      if (options.json) printJson(state);
      else print(stockInReport(state));
      return 0;
    });
  });
}
