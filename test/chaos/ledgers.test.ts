import { describe, expect, it } from 'vitest';
import type { LedgerMovement, StockLedgerState } from '../../src/contracts/stock-ledger.js';
import { backlogOf, isQuiet } from '../../tools/chaos/ledgers.js';

const totals = {
  linesTaken: 4,
  movementsRecorded: 3,
  linesRecorded: 4,
  settledByEvidence: 1,
  resentAfterEvidence: 1,
  operatorDecisions: 0,
  probes: 2,
};

function state(over: Partial<StockLedgerState> = {}): StockLedgerState {
  return {
    businessId: 'b',
    branch: 'br',
    reporting: { mode: 'per-sale' },
    onHand: {},
    pending: {},
    open: [],
    recent: [],
    totals,
    ...over,
  };
}

const open = (status: LedgerMovement['status']): LedgerMovement => ({
  referenceId: `r-${status}`,
  itemId: 'i',
  action: 'DEDUCT',
  quantity: 1,
  unitPrice: 1,
  lines: [],
  status,
});

describe("the chaos run's view of the ledgers", () => {
  it('is quiet only when no ledger has a line pending or a movement open, and adds their own counts up', () => {
    const quiet = backlogOf([state(), state()]);
    expect(quiet).toMatchObject({ ledgers: 2, pendingLines: 0, openMovements: 0, needsOperator: 0 });
    expect(quiet.totals).toEqual({
      linesTaken: 8,
      movementsRecorded: 6,
      linesRecorded: 8,
      settledByEvidence: 2,
      resentAfterEvidence: 2,
      operatorDecisions: 0,
      probes: 4,
    });
    expect(isQuiet(quiet)).toBe(true);
    expect(isQuiet(backlogOf([]))).toBe(true);

    const pending = backlogOf([state({ pending: { itm_sugar: 2, itm_milk: 1 } })]);
    expect(pending.pendingLines).toBe(3);
    expect(isQuiet(pending)).toBe(false);

    const busy = backlogOf([
      state({ open: [open('sending'), open('needs_operator')] }),
      state({ open: [open('uncertain')] }),
    ]);
    expect(busy).toMatchObject({ openMovements: 3, needsOperator: 1 });
    expect(isQuiet(busy)).toBe(false);
  });
});
