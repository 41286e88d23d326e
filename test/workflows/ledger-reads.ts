/**
 * What became of a sale's stock lines, read from outside the sale, for the end-to-end workflow tests: the
 * branch's stock ledger (its state query) and the sandbox's own movement records. The sale hands its lines over and
 * does not wait for them (a closed sale keeps them `handed_over`), so these reads wait for the ledger instead.
 *
 * The ledger is one workflow per workflow queue, business and branch (id `stock-ledger:<queue>:<business>:<branch>`):
 * a stack's sales share theirs, and its movements go to that stack's sandbox, whatever other files run meanwhile.
 */
import type { Client } from '@temporalio/client';
import { expect } from 'vitest';
import type { SandboxInspector } from '../../sandbox/inspector.js';
import type { StockMovementState } from '../../src/contracts/sale.js';
import {
  getStockLedgerStateQuery,
  stockLedgerWorkflowId,
  type LedgerMovement,
  type StockLedgerState,
} from '../../src/contracts/stock-ledger.js';
import { eventually } from '../helpers/eventually.js';

export interface LedgerAt {
  client: Client;
  /** The stack's workflow queue: its sales' ledger is its own (src/contracts/stock-ledger.ts). */
  taskQueue: string;
  businessId: string;
  /** The branch's id: a sale naming none, or naming it by `authorityBhfId`, reaches the same ledger. */
  branchId: string;
}

export function ledgerHandle({ client, taskQueue, businessId, branchId }: LedgerAt) {
  return client.workflow.getHandle(stockLedgerWorkflowId(taskQueue, businessId, branchId));
}

/** The ledger's state once `predicate` holds (it starts with the first hand-over, so it may not exist yet). */
export function ledgerWhen(
  at: LedgerAt,
  predicate: (state: StockLedgerState) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<StockLedgerState> {
  return eventually(
    () =>
      ledgerHandle(at)
        .query(getStockLedgerStateQuery)
        .catch(() => undefined),
    (state) => state !== undefined && predicate(state),
    { timeoutMs, intervalMs: 100, what },
  ).then((state) => state!);
}

/** The recorded movement of the ledger that carries `lineId`, if any (the ledger lists its 200 latest). */
export function carrierOf(state: StockLedgerState, lineId: string): LedgerMovement | undefined {
  return state.recent.find((m) => m.status === 'recorded' && m.lines.some((l) => l.lineId === lineId));
}

/**
 * Waits until the ledger has recorded a movement carrying each of `lines` (a sale's stock lines: their `referenceId`
 * is the line id) and returns those movements, in the order of the lines.
 */
export async function carriersOf(
  at: LedgerAt,
  lines: readonly Pick<StockMovementState, 'referenceId'>[],
  timeoutMs = 30_000,
): Promise<LedgerMovement[]> {
  const state = await ledgerWhen(
    at,
    (st) => lines.every((l) => carrierOf(st, l.referenceId) !== undefined),
    `the ledger recording ${lines.length} line(s)`,
    timeoutMs,
  );
  return lines.map((l) => carrierOf(state, l.referenceId)!);
}

/**
 * Every one of `lines` is carried by exactly one movement the ledger recorded, and the sandbox recorded each of those
 * movements exactly once, for the sum of the lines it carries (lines of one item may share a movement while the budget
 * is contended). Returns the carrying movements, in the order of the lines.
 */
export async function expectRecordedOnce(
  at: LedgerAt,
  inspector: SandboxInspector,
  lines: readonly Pick<StockMovementState, 'referenceId' | 'itemId' | 'action' | 'quantity'>[],
): Promise<LedgerMovement[]> {
  const state = await ledgerWhen(
    at,
    (st) => lines.every((l) => carrierOf(st, l.referenceId) !== undefined),
    `the ledger recording ${lines.length} line(s)`,
  );
  const carriers = lines.map((line) => {
    const carrying = state.recent.filter((m) => m.lines.some((l) => l.lineId === line.referenceId));
    expect(
      carrying.map((m) => m.status),
      `movements carrying ${line.referenceId}`,
    ).toEqual(['recorded']);
    const carrier = carrying[0]!;
    expect(carrier.lines.filter((l) => l.lineId === line.referenceId)).toEqual([
      expect.objectContaining({ quantity: line.quantity }),
    ]);
    expect([carrier.itemId, carrier.action]).toEqual([line.itemId, line.action]);
    return carrier;
  });
  for (const carrier of new Map(carriers.map((c) => [c.referenceId, c])).values()) {
    const records = await inspector.stockMovements({ businessId: at.businessId, referenceId: carrier.referenceId });
    expect(records.map((r) => [r.itemId, r.action, r.quantity])).toEqual([
      [carrier.itemId, carrier.action, carrier.quantity],
    ]);
    expect(carrier.quantity).toBeCloseTo(
      carrier.lines.reduce((sum, l) => sum + l.quantity, 0),
      6,
    );
  }
  return carriers;
}
