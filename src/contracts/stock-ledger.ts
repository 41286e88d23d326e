/** One ledger per branch alone moves its stock, so `quantityOnHand` after a movement tells whether it was applied. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';

export const STOCK_LEDGER_WORKFLOW_TYPE = 'stockLedgerWorkflow';

/** The label of a ledger whose input names no branch. */
export const FIRST_BRANCH = 'first-branch';

/** The queue is in the id: the ledger runs with its sales' worker keys, so another fleet gets a ledger of its own. */
export function stockLedgerWorkflowId(taskQueue: string, businessId: string, branchId: string): string {
  return `stock-ledger:${taskQueue}:${businessId}:${branchId}`;
}

/** The modes: docs/stock-ledger.md, "Reporting modes (per business)" (A24). */
export type StockReporting = { mode: 'per-sale' } | { mode: 'coalesced'; maxDelaySeconds: number };

export const DEFAULT_STOCK_REPORTING: StockReporting = { mode: 'coalesced', maxDelaySeconds: 180 };

export interface StockMove {
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  quantity: number;
  unitPrice: number;
}

export interface StockLine extends StockMove {
  /** Unique per line and action (workflows/keys.ts stockReferenceId). */
  lineId: string;
  saleWorkflowId: string;
}

/** The id a stock-in hands its lines over under (stockInWorkflowId, `stock-in:<queue>:<business>`) begins so. */
const STOCK_IN_ID_PREFIX = 'stock-in:';

/**
 * A line of goods that came in (a supplier invoice's, handed over by the stock-in), not a sale's or a refund's: no
 * customer waits for it, so the ledger never sends it with the tills. Read from the id the line already carries, so
 * the carry keeps its shape and lines carried by an older build are told apart alike.
 */
export function isIncomingStock(line: Pick<StockLine, 'saleWorkflowId'>): boolean {
  return line.saleWorkflowId.startsWith(STOCK_IN_ID_PREFIX);
}

/** Sent with signal-with-start: the ledger starts with its first line. */
export interface StockHandOver {
  lines: StockLine[];
  /** As the worker is configured now: the ledger follows the latest. */
  reporting: StockReporting;
}

export interface StockLedgerInput {
  businessId: string;
  /** The branch's canonical id; absent: FIRST_BRANCH. */
  branchId?: string;
  carried?: StockLedgerCarry;
}

/** The schema of StockLedgerCarry; how it may change: docs/stock-ledger.md, "What a run carries to the next". */
export const STOCK_LEDGER_CARRY_SCHEMA = 3;

/** What a ledger run hands to the next (continue-as-new), possibly a run of another build. */
export interface StockLedgerCarry {
  /** Absent: 1. */
  schema?: number;
  nextSequence: number;
  reporting: StockReporting;
  onHand: Record<string, number>;
  /**
   * Lines not in a movement yet, with when each was taken (workflow ms): its max delay keeps counting. Schema 3: a line
   * may carry `parts`, the lines of the same goods folded into it as they came.
   */
  pending: Array<StockLine & { takenAt?: number; parts?: string[] }>;
  open: LedgerMovement[];
  totals: LedgerTotals;
  /**
   * Lines recorded lately: a hand-over again (its activity retried) is still taken once. Schema 2: digests (`#` and 16
   * characters, workflows/keys.ts `rememberedLineId`); schema 1: the ids themselves.
   */
  lineIds: string[];
}

export type LedgerMovementStatus =
  | 'sending'
  /** The service recorded it (its answer, or the evidence of a later quantity on hand). */
  | 'recorded'
  /** Its answer was lost: the next quantity on hand for its item will say whether it was applied. */
  | 'uncertain'
  /** The evidence could not decide, or the service refused it: an operator settles it (`settleMovement`). */
  | 'needs_operator';

/** A line a movement carries; its quantity includes that of the lines folded into it. */
export interface LedgerLine {
  lineId: string;
  saleWorkflowId: string;
  quantity: number;
  /**
   * Goods that came in, of the same item, action and price, folded into this line as they arrived: their ids as
   * remembered digests (workflows/keys.ts `rememberedLineId`), a tenth of a line's bytes each.
   */
  parts?: string[];
}

export interface LedgerMovement extends StockMove {
  /** The line's own id when it carries one line and nothing folded into it, else `stk:<ledger>:<n>`. */
  referenceId: string;
  lines: LedgerLine[];
  status: LedgerMovementStatus;
  movementId?: string;
  /** The quantity on hand the ledger knew before sending it. */
  onHandBefore?: number;
  settledBy?: 'evidence' | 'operator';
  problem?: string;
  sentAt?: string;
}

export interface LedgerTotals {
  linesTaken: number;
  movementsRecorded: number;
  linesRecorded: number;
  settledByEvidence: number;
  resentAfterEvidence: number;
  operatorDecisions: number;
  probes: number;
}

/** A movement as the state shows it: how many lines were folded into each of its lines, not their digests. */
export type LedgerMovementShown = Omit<LedgerMovement, 'lines'> & {
  lines: Array<Omit<LedgerLine, 'parts'> & { folded?: number }>;
};

export interface StockLedgerState {
  businessId: string;
  branch: string;
  reporting: StockReporting;
  onHand: Record<string, number>;
  /** Lines waiting per item, folded ones included. */
  pending: Record<string, number>;
  /** Movements not settled; then the most recent recorded ones (at most 200), newest last. */
  open: LedgerMovementShown[];
  recent: LedgerMovementShown[];
  totals: LedgerTotals;
}

/** `settleMovement`'s argument, as the workflow checks it and docs/schemas/settle-movement.schema.json publishes it. */
const settleMovementArgsSchema = z
  .strictObject({
    referenceId: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100)
      .describe("The movement's reference, as the ledger's state and details show it."),
    decision: z
      .enum(['applied', 'resend'])
      .describe(
        '`applied`: the compliance dashboard shows the movement recorded; ' +
          '`resend`: it is not there, send it again under the same reference.',
      ),
  })
  .describe("The argument of the stock ledger's settleMovement update.");

const schemas = { settleMovementArgs: settleMovementArgsSchema };

/** Behind a function: the workflow sandbox freezes what a shared module's exports reach (see saleSchemas). */
export function stockLedgerSchemas(): typeof schemas {
  return schemas;
}

export const handOverStockSignal = defineSignal<[StockHandOver]>('handOverStock');
export const settleMovementUpdate = defineUpdate<LedgerMovement, [z.output<typeof settleMovementArgsSchema>]>(
  'settleMovement',
);
export const getStockLedgerStateQuery = defineQuery<StockLedgerState>('getState');

/**
 * Lines a workflow was told and has not yet passed on: the stock-in's (to its ledgers), a ledger's goods that came in
 * (to the service, by what they weigh in its carry: a line folded into another counts a tenth).
 * A sender of stock paces itself by it (`STOCK_PACE`), so a first sync's year of invoices reaches the service at the
 * budget's pace without piling up in any carry.
 */
export const BACKLOG_QUERY = 'getBacklog';
export const getBacklogQuery = defineQuery<number>(BACKLOG_QUERY);

/**
 * How far senders of incoming stock run ahead. The stock-in hands a branch's ledger at most `handOverLines` lines at a
 * time, and more only once the ledger's backlog leaves room for them under `ledgerLines`; its first hand-over to a
 * ledger in a run is the one not checked first. A ledger holds at most `ledgerLines + handOverLines` lines' weight of
 * incoming stock (~240 bytes a line: ~95 KB), plus its tills'; it folds the lines of the same goods as they arrive, so
 * the pace bounds bytes without cutting what one movement carries. The sync tells the stock-in only while its backlog
 * is under `stockInLines`. A wait for room lasts at most `waitMs` per activity; a sender that cannot read the backlog
 * (no worker of the receiver's build) goes on as if there were room.
 */
export const STOCK_PACE = { ledgerLines: 300, handOverLines: 100, stockInLines: 1_000, waitMs: 5 * 60_000 };
