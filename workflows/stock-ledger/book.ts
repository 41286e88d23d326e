import {
  DEFAULT_STOCK_REPORTING,
  isIncomingStock,
  type LedgerLine,
  type LedgerMovement,
  type LedgerMovementShown,
  type LedgerTotals,
  type StockLedgerCarry,
  type StockLedgerState,
  type StockLine,
  type StockReporting,
} from '../../src/contracts/stock-ledger.js';
import { rememberedLineId } from '../keys.js';
import { weighEvidence } from './evidence.js';

const RECENT_MOVEMENTS = 200;
/**
 * Line ids remembered after their movement left `recent`, as 17-character digests: a hand-over sent again (retried) is
 * taken once. About 60 KB in the carry, whatever the lines' references.
 */
const REMEMBERED_LINE_IDS = 3000;
/**
 * Items whose last quantity on hand is kept, the most recently moved: the evidence for a lost answer. An item not moved
 * among the last 2,000 is probed again should its next answer be lost; the carry stays near 60 KB, not the catalogue.
 */
const ON_HAND_KEPT = 2000;

/**
 * What a line folded into another weighs in the backlog: its digest (~20 bytes) against a line's ~240. The pace bounds
 * the carry's bytes, so a year of one item's deliveries waits as one line, not as a year of lines.
 */
const FOLDED_WEIGHT = 0.1;

type PendingLine = StockLine & { takenAt: number; parts?: string[] };

/** A line and the lines folded into it. */
export function linesIn(lines: readonly LedgerLine[]): number {
  return lines.reduce((n, l) => n + 1 + (l.parts?.length ?? 0), 0);
}

function signed(action: 'ADD' | 'DEDUCT', quantity: number): number {
  return action === 'ADD' ? quantity : -quantity;
}

/** Lines not yet sent, movements not settled, each item's last quantity: the workflow sends, the book decides. */
export class LedgerBook {
  reporting: StockReporting;
  private readonly onHand = new Map<string, number>();
  private pending: PendingLine[] = [];
  private open: LedgerMovement[] = [];
  /** Per item, movements proven not applied (or an operator asked to re-send): sent again first, as they were. */
  private readonly resend = new Map<string, LedgerMovement[]>();
  private recent: LedgerMovement[] = [];
  private readonly lineIds = new Set<string>();
  /** When each line of a movement not yet recorded was taken: one never sent puts them back as they were. */
  private readonly takenAt = new Map<string, number>();
  private rememberedLineIds: string[];
  private nextSequence: number;
  readonly totals: LedgerTotals;

  constructor(
    readonly businessId: string,
    readonly branch: string,
    /** Short and stable: names a coalesced movement (`stk:<tag>:<n>`) within the contract's 100 characters. */
    private readonly tag: string,
    carried: StockLedgerCarry | undefined,
    now: number,
  ) {
    this.reporting = carried?.reporting ?? DEFAULT_STOCK_REPORTING;
    this.nextSequence = carried?.nextSequence ?? 1;
    this.totals = {
      linesTaken: 0,
      movementsRecorded: 0,
      linesRecorded: 0,
      settledByEvidence: 0,
      resentAfterEvidence: 0,
      operatorDecisions: 0,
      probes: 0,
      ...carried?.totals,
    };
    for (const [item, q] of Object.entries(carried?.onHand ?? {})) this.setOnHand(item, q);
    // Carries before schema 2 remembered the ids themselves.
    this.rememberedLineIds = (carried?.lineIds ?? []).map((id) => (id.startsWith('#') ? id : rememberedLineId(id)));
    for (const id of this.rememberedLineIds) this.lineIds.add(id);
    for (const { takenAt, ...line } of carried?.pending ?? []) this.admit(line, takenAt ?? now);
    for (const m of carried?.open ?? []) {
      for (const l of m.lines) for (const id of [l.lineId, ...(l.parts ?? [])]) this.lineIds.add(id);
      if (m.status === 'sending') this.queueResend({ ...m });
      else this.open.push(m);
    }
  }

  /**
   * A line already taken (the same hand-over again) is ignored. Goods that came in fold into a waiting line of the same
   * item, action and price (coalesced reporting): they would go in one movement anyway. Returns how many were new.
   */
  take(lines: readonly StockLine[], reporting: StockReporting, now: number): number {
    this.reporting = reporting;
    let taken = 0;
    for (const line of lines) {
      const digest = rememberedLineId(line.lineId);
      if (this.lineIds.has(line.lineId) || this.lineIds.has(digest)) continue;
      taken++;
      const into = reporting.mode === 'coalesced' && isIncomingStock(line) ? this.foldable(line) : undefined;
      if (!into) {
        this.admit(line, now);
        continue;
      }
      into.quantity = Math.round((into.quantity + line.quantity) * 10_000) / 10_000;
      (into.parts ??= []).push(digest);
      this.lineIds.add(digest);
    }
    this.totals.linesTaken += taken;
    return taken;
  }

  private foldable(line: StockLine): PendingLine | undefined {
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      if (
        p.itemId === line.itemId &&
        p.action === line.action &&
        p.unitPrice === line.unitPrice &&
        p.saleWorkflowId === line.saleWorkflowId
      )
        return p;
    }
    return undefined;
  }

  private admit(line: StockLine & { parts?: string[] }, now: number): void {
    this.lineIds.add(line.lineId);
    for (const part of line.parts ?? []) this.lineIds.add(part);
    this.pending.push({ ...line, takenAt: now });
  }

  probeReference(): string {
    return `stk:${this.tag}:probe:${this.nextSequence++}`;
  }

  hasResend(itemId: string): boolean {
    return (this.resend.get(itemId)?.length ?? 0) > 0;
  }

  knownOnHand(itemId: string): number | undefined {
    return this.onHand.get(itemId);
  }

  /** Items with something to send, or a lost answer to settle, in the order their work arrived. */
  itemsWithWork(): string[] {
    const items = new Set<string>();
    for (const [item, queue] of this.resend) if (queue.length > 0) items.add(item);
    for (const line of this.pending) items.add(line.itemId);
    for (const m of this.open) if (m.status === 'uncertain') items.add(m.itemId);
    return [...items];
  }

  hasPendingLines(itemId: string): boolean {
    return this.hasResend(itemId) || this.pending.some((l) => l.itemId === itemId);
  }

  uncertainOf(itemId: string): LedgerMovement[] {
    return this.open.filter((m) => m.itemId === itemId && m.status === 'uncertain');
  }

  oldestPendingAt(itemId: string): number | undefined {
    return this.pending.find((l) => l.itemId === itemId)?.takenAt;
  }

  /** One proven not applied first, as it was; else the oldest pending line, alone or with its kind (coalesced). */
  nextMovement(itemId: string): LedgerMovement | undefined {
    const resent = this.resend.get(itemId)?.shift();
    if (resent) {
      resent.status = 'sending';
      this.open.push(resent);
      return resent;
    }
    const first = this.pending.find((l) => l.itemId === itemId);
    if (!first) return undefined;
    const together = (l: PendingLine) =>
      l.itemId === itemId && l.action === first.action && l.unitPrice === first.unitPrice;
    const lines = this.reporting.mode === 'per-sale' ? [first] : this.pending.filter(together);
    const taken = new Set(lines);
    for (const l of lines) this.takenAt.set(l.lineId, l.takenAt);
    this.pending = this.pending.filter((l) => !taken.has(l));
    const quantity = Math.round(lines.reduce((sum, l) => sum + l.quantity, 0) * 10_000) / 10_000;
    const alone = lines.length === 1 && !first.parts;
    const m: LedgerMovement = {
      referenceId: alone ? first.lineId : `stk:${this.tag}:${this.nextSequence++}`,
      itemId,
      action: first.action,
      quantity,
      unitPrice: first.unitPrice,
      lines: lines.map((l) => ({
        lineId: l.lineId,
        saleWorkflowId: l.saleWorkflowId,
        quantity: l.quantity,
        ...(l.parts ? { parts: l.parts } : {}),
      })),
      status: 'sending',
    };
    this.open.push(m);
    return m;
  }

  /** A movement that was never sent (it was not started before its deadline): its lines wait again, first. */
  unsend(m: LedgerMovement): void {
    this.open = this.open.filter((x) => x !== m);
    const back: PendingLine[] = m.lines.map((l) => ({
      lineId: l.lineId,
      saleWorkflowId: l.saleWorkflowId,
      itemId: m.itemId,
      action: m.action,
      quantity: l.quantity,
      unitPrice: m.unitPrice,
      takenAt: this.takenAt.get(l.lineId) ?? 0,
      ...(l.parts ? { parts: l.parts } : {}),
    }));
    this.pending = [...back, ...this.pending];
  }

  /** Notes what the ledger knew of its item before the movement. */
  sending(m: LedgerMovement, now: number): void {
    m.sentAt = new Date(now).toISOString();
    const before = this.onHand.get(m.itemId);
    if (before === undefined) delete m.onHandBefore;
    else m.onHandBefore = before;
  }

  /** The service answered `m` (undefined: a probe) with `onHand`: settles the item's uncertain movements by it. */
  answered(itemId: string, m: LedgerMovement | undefined, movementId: string | undefined, onHand: number) {
    const uncertain = this.uncertainOf(itemId);
    const settled = { applied: [] as LedgerMovement[], toOperator: [] as LedgerMovement[] };
    if (uncertain.length > 0) {
      const before = uncertain[0]!.onHandBefore;
      const deltas = uncertain.map((u) => signed(u.action, u.quantity));
      const answeredDelta = m ? signed(m.action, m.quantity) : 0;
      const evidence =
        before === undefined
          ? { decided: false as const, reason: 'the quantity on hand before it was not known' }
          : weighEvidence(before, deltas, answeredDelta, onHand);
      uncertain.forEach((u, i) => {
        if (!evidence.decided) {
          this.toOperator(
            u,
            `its answer was lost and ${evidence.reason}: ` +
              `check the dashboard for reference ${u.referenceId}, then settle it`,
          );
          settled.toOperator.push(u);
        } else if (evidence.applied[i]) {
          this.recorded(u, undefined, 'evidence');
          settled.applied.push(u);
        } else {
          this.totals.resentAfterEvidence++;
          this.queueResend(u);
        }
      });
      if (evidence.decided) this.totals.settledByEvidence += uncertain.length;
    }
    this.setOnHand(itemId, onHand);
    if (m) this.recorded(m, movementId);
    else this.totals.probes++;
    return settled;
  }

  /** Its answer was lost: the item's next quantity on hand will tell. */
  uncertain(m: LedgerMovement): void {
    m.status = 'uncertain';
  }

  toOperator(m: LedgerMovement, problem: string): void {
    m.status = 'needs_operator';
    m.problem = problem;
    if (!this.open.includes(m)) this.open.push(m);
  }

  settleByOperator(referenceId: string, decision: 'applied' | 'resend'): LedgerMovement | undefined {
    const m = this.open.find((x) => x.referenceId === referenceId && x.status === 'needs_operator');
    if (!m) return undefined;
    this.totals.operatorDecisions++;
    delete m.problem;
    if (decision === 'applied') this.recorded(m, undefined, 'operator');
    else {
      m.settledBy = 'operator';
      this.queueResend(m);
    }
    return m;
  }

  waitingForOperator(): LedgerMovement[] {
    return this.open.filter((m) => m.status === 'needs_operator');
  }

  /**
   * Goods that came in and are not yet recorded by a movement in flight (waiting, or to be sent again), by their weight
   * in the carry. The tills' lines are not counted: their own bound is the max delay at the sales' rate, and counted
   * here they would hold supplier lines back for the tills' sake.
   */
  backlog(): number {
    const weigh = (lines: readonly LedgerLine[]) =>
      lines.filter(isIncomingStock).reduce((w, l) => w + 1 + (l.parts?.length ?? 0) * FOLDED_WEIGHT, 0);
    let weight = weigh(this.pending);
    for (const queue of this.resend.values()) for (const m of queue) weight += weigh(m.lines);
    return Math.ceil(weight);
  }

  isIdle(): boolean {
    return (
      this.pending.length === 0 && this.open.length === 0 && [...this.resend.values()].every((q) => q.length === 0)
    );
  }

  private queueResend(m: LedgerMovement): void {
    this.open = this.open.filter((x) => x !== m);
    m.status = 'sending';
    this.resend.set(m.itemId, [...(this.resend.get(m.itemId) ?? []), m]);
  }

  private recorded(m: LedgerMovement, movementId?: string, settledBy?: 'evidence' | 'operator'): void {
    m.status = 'recorded';
    if (movementId !== undefined) m.movementId = movementId;
    if (settledBy !== undefined) m.settledBy = settledBy;
    delete m.problem;
    this.open = this.open.filter((x) => x !== m);
    this.totals.movementsRecorded++;
    this.totals.linesRecorded += linesIn(m.lines);
    for (const l of m.lines) this.takenAt.delete(l.lineId);
    this.recent.push(m);
    while (this.recent.length > RECENT_MOVEMENTS) {
      const gone = this.recent.shift()!;
      for (const l of gone.lines) for (const id of [l.lineId, ...(l.parts ?? [])]) this.remember(id);
    }
  }

  /** `lineId` may be a folded line's digest already. */
  private remember(lineId: string): void {
    const digest = lineId.startsWith('#') ? lineId : rememberedLineId(lineId);
    this.lineIds.delete(lineId);
    this.lineIds.add(digest);
    this.rememberedLineIds.push(digest);
    while (this.rememberedLineIds.length > REMEMBERED_LINE_IDS) this.lineIds.delete(this.rememberedLineIds.shift()!);
  }

  /** The most recently moved items last: past the bound, the longest unmoved is forgotten. */
  private setOnHand(itemId: string, quantity: number): void {
    this.onHand.delete(itemId);
    this.onHand.set(itemId, quantity);
    if (this.onHand.size > ON_HAND_KEPT) this.onHand.delete(this.onHand.keys().next().value!);
  }

  /** What the next run starts from (continue-as-new): only between movements, so nothing is `sending`. */
  carry(): StockLedgerCarry {
    const queued = [...this.resend.values()].flat();
    const recentLineIds = this.recent.flatMap((m) =>
      m.lines.flatMap((l) => [rememberedLineId(l.lineId), ...(l.parts ?? [])]),
    );
    return {
      nextSequence: this.nextSequence,
      reporting: this.reporting,
      onHand: Object.fromEntries(this.onHand),
      pending: [...this.pending],
      open: [...this.open, ...queued],
      totals: { ...this.totals },
      lineIds: [...this.rememberedLineIds, ...recentLineIds].slice(-REMEMBERED_LINE_IDS),
    };
  }

  state(): StockLedgerState {
    const pending: Record<string, number> = {};
    for (const l of this.pending) pending[l.itemId] = (pending[l.itemId] ?? 0) + linesIn([l]);
    for (const [item, queue] of this.resend)
      if (queue.length > 0) pending[item] = (pending[item] ?? 0) + queue.reduce((n, m) => n + linesIn(m.lines), 0);
    return {
      businessId: this.businessId,
      branch: this.branch,
      reporting: this.reporting,
      onHand: Object.fromEntries(this.onHand),
      pending,
      open: [...this.open, ...[...this.resend.values()].flat()].map(shown),
      recent: this.recent.map(shown),
      totals: { ...this.totals },
    };
  }
}

/** The digests of folded lines stay in the carry; a reader is told only how many there were. */
function shown(m: LedgerMovement): LedgerMovementShown {
  return {
    ...m,
    lines: m.lines.map(({ parts, ...l }) => (parts ? { ...l, folded: parts.length } : l)),
  };
}
