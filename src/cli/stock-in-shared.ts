// What the stock-in commands share: one connection per command, and their answers as text or JSON.
import { connectStockInClient, type StockInClient } from '../client/stock-in.js';
import type { CliCommand } from './command.js';

export interface CommonOptions {
  taskQueue?: string;
  json?: boolean;
}

export const print = (lines: readonly string[]) => console.log(lines.join('\n'));
export const printJson = (value: unknown) => console.log(JSON.stringify(value, null, 2));

export async function withStockIn(options: CommonOptions, use: (stockIn: StockInClient) => Promise<number>) {
  const connected = await connectStockInClient({ taskQueue: options.taskQueue });
  try {
    return await use(connected.stockIn);
  } finally {
    await connected.close();
  }
}

export const withJson = (command: CliCommand) => command.option('--json', 'print the answer as JSON instead of text');
