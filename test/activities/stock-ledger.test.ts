/**
 * The hand-over of a sale's stock lines to its branch's ledger, through the real Temporal server: one signal on its way
 * to a ledger at a time, what comes meanwhile in the next. No worker polls the ledgers' queue, so each ledger's history
 * holds exactly the signals sent (the ledger itself is stock-ledger-logic.test.ts's).
 */
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStockLedgerActivities, LINES_PER_HAND_OVER } from '../../activities/stock-ledger.js';
import type { StockHandOver, StockLine } from '../../src/contracts/stock-ledger.js';

let connection: Connection;
let client: Client;
const taskQueue = `stock-hand-over-${Date.now().toString(36)}`;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('temporalNamespace') });
});
afterAll(async () => {
  for await (const execution of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` }))
    await client.workflow
      .getHandle(execution.workflowId)
      .terminate('test over')
      .catch(() => undefined);
  await connection.close();
});

const line = (sale: number, n: number): StockLine => ({
  lineId: `sale-${sale}:line-${n}`,
  saleWorkflowId: `sale-${sale}`,
  itemId: 'itm_sugar_2kg',
  action: 'DEDUCT',
  quantity: 1,
  unitPrice: 250,
});

async function signalsTo(workflowId: string): Promise<StockHandOver[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const signals = (history.events ?? []).flatMap((event) => {
    const attributes = event.workflowExecutionSignaledEventAttributes;
    return attributes ? [attributes] : [];
  });
  const converter = client.options.loadedDataConverter.payloadConverter;
  return signals.map((signal) => converter.fromPayload<StockHandOver>(signal.input!.payloads![0]!));
}

describe('a stock hand-over', () => {
  const activities = () =>
    createStockLedgerActivities({
      temporal: { client },
      logger,
      canonicalBranch: async (_businessId, branchId) => branchId ?? '00',
    });

  it('sends what comes while a signal is on its way as one signal, each line once, and answers every caller', async () => {
    const { handOverStock } = activities();
    const businessId = `biz_${Date.now().toString(36)}`;
    const sales = Array.from({ length: 40 }, (_, sale) => [line(sale, 0), line(sale, 1)]);
    const answers = await Promise.all(
      sales.map((lines) => handOverStock({ businessId, branchId: 'nairobi', lines, taskQueue })),
    );
    // And one of another branch: its own ledger, its own signals.
    const other = await handOverStock({ businessId, branchId: 'mombasa', lines: [line(99, 0)], taskQueue });

    const ledger = answers[0]!.ledgerWorkflowId;
    expect(new Set(answers.map((a) => a.ledgerWorkflowId))).toEqual(new Set([ledger]));
    expect(other.ledgerWorkflowId).not.toBe(ledger);
    const signals = await signalsTo(ledger);
    // The first alone, at once; the 39 that came while it was on its way in one more.
    expect(signals.map((s) => s.lines.length)).toEqual([2, 78]);
    expect(signals.flatMap((s) => s.lines.map((l) => l.lineId)).sort()).toEqual(
      sales
        .flat()
        .map((l) => l.lineId)
        .sort(),
    );
    expect(signals.every((s) => s.reporting.mode === 'coalesced')).toBe(true);
    expect((await signalsTo(other.ledgerWorkflowId)).map((s) => s.lines.length)).toEqual([1]);
  });

  it(`puts at most ${LINES_PER_HAND_OVER} lines in a signal, and a larger hand-over goes alone`, async () => {
    const { handOverStock } = activities();
    const businessId = `biz_${Date.now().toString(36)}_big`;
    const invoice = Array.from({ length: LINES_PER_HAND_OVER + 50 }, (_, n) => line(1_000, n));
    const small = Array.from({ length: 150 }, (_, sale) => [line(sale, 0)]);
    const [first] = await Promise.all([
      handOverStock({ businessId, lines: [line(0, 9)], taskQueue }),
      handOverStock({ businessId, lines: invoice, taskQueue }),
      ...small.map((lines) => handOverStock({ businessId, lines, taskQueue })),
    ]);
    const signals = await signalsTo(first!.ledgerWorkflowId);
    expect(signals.map((s) => s.lines.length)).toEqual([1, LINES_PER_HAND_OVER + 50, 150]);
  });

  it('gives each caller of a signal that failed its error: each sale then hands its lines over itself', async () => {
    const elsewhere = new Client({ connection, namespace: 'no-such-namespace' });
    const { handOverStock } = createStockLedgerActivities({
      temporal: { client: elsewhere },
      logger,
      canonicalBranch: async () => '00',
    });
    const results = await Promise.allSettled(
      [0, 1, 2].map((sale) => handOverStock({ businessId: 'biz_x', lines: [line(sale, 0)], taskQueue })),
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    // The ledger's turn is over: the next hand-over is sent, not left behind a failed one.
    await expect(handOverStock({ businessId: 'biz_x', lines: [line(3, 0)], taskQueue })).rejects.toThrow();
  });
});
