/**
 * The stock-in's bookkeeping over plain data: which invoice lines went to which item, in which round of confirmation,
 * and what must be handed to a ledger for that. Every movement's reference is derived from the invoice, the line, the
 * round and the step, so handing the same thing over again adds nothing twice (the ledger takes a line once).
 */
import type {
  InvoiceLineState,
  InvoiceStock,
  Mapping,
  MappingTarget,
  SeenPurchase,
  StockInCarry,
  StockInSettings,
  StockInState,
  StockInTotals,
} from '../../src/contracts/stock-in.js';
import type { StockLine } from '../../src/contracts/stock-ledger.js';
import { stockInReferenceId } from '../keys.js';
import { MappingTable, matchLine, normalise, type NameAnswers } from './matching.js';

/** Lines for one branch's ledger. */
export interface Handover {
  purchaseId: string;
  branch: string | null;
  lines: StockLine[];
}

type LineRef = { purchaseId: string; line: number };

export class StockInBook {
  readonly mappings: MappingTable;
  private readonly invoices = new Map<string, InvoiceStock>();
  readonly totals: StockInTotals;
  settings: StockInSettings | null;
  taskQueue: string | undefined;

  constructor(
    readonly businessId: string,
    /** The stock-in's own workflow id: the ledger's lines name the process that handed them over. */
    private readonly processId: string,
    carried?: StockInCarry,
  ) {
    this.mappings = new MappingTable(carried?.mappings);
    for (const invoice of carried?.invoices ?? []) this.invoices.set(invoice.purchaseId, invoice);
    this.totals = carried?.totals ?? {
      invoicesAdded: 0,
      linesAdded: 0,
      linesWaiting: 0,
      linesTakenBack: 0,
      matchedBy: { merchant: 0, learned: 0, name: 0, operator: 0 },
    };
    this.settings = carried?.settings ?? null;
    this.taskQueue = carried?.taskQueue;
  }

  /** Descriptions of the lines no mapping matches, of `purchases` confirmed and of waiting invoices: what to ask. */
  unmappedDescriptions(purchases: readonly SeenPurchase[] = []): string[] {
    const unmapped = (pin: string, lines: readonly { description: string; code: string | null }[]) =>
      lines.filter((l) => !this.mappings.find(pin, l)).map((l) => l.description);
    return [
      ...new Set([
        ...purchases.filter((p) => p.status === 'confirmed').flatMap((p) => unmapped(p.supplierPin, p.lines)),
        ...this.waiting().flatMap((inv) =>
          unmapped(
            inv.supplierPin,
            inv.lines.filter((l) => !l.match),
          ),
        ),
      ]),
    ];
  }

  /** What the purchases sync saw: a new confirmation adds, leaving `confirmed` takes back; the same status, nothing. */
  observe(p: SeenPurchase, names: NameAnswers | undefined, now: string): Handover[] {
    const settings = this.settings;
    let inv = this.invoices.get(p.id);
    if (!inv) {
      if (p.status !== 'confirmed') return [];
      inv = {
        purchaseId: p.id,
        supplierPin: p.supplierPin,
        supplierName: p.supplierName,
        supplierInvoiceNumber: p.supplierInvoiceNumber,
        invoiceDate: p.invoiceDate,
        branch: p.branch,
        status: p.status,
        state: 'not_confirmed',
        round: 0,
        lines: [],
        corrections: 0,
        updatedAt: now,
      };
      this.invoices.set(p.id, inv);
    }
    const wasConfirmed = inv.status === 'confirmed' && inv.round > 0;
    if (p.status === 'confirmed' && wasConfirmed) return [];
    if (p.status !== 'confirmed' && !wasConfirmed) {
      inv.status = p.status;
      return [];
    }
    inv.status = p.status;
    inv.updatedAt = now;
    if (p.status !== 'confirmed') return this.takeBack(inv);
    Object.assign(inv, {
      supplierPin: p.supplierPin,
      supplierName: p.supplierName,
      supplierInvoiceNumber: p.supplierInvoiceNumber,
      invoiceDate: p.invoiceDate,
      branch: p.branch,
    });
    inv.round += 1;
    inv.corrections = 0;
    inv.lines = p.lines.map((l, line) => ({ line, ...l, added: 0 }));
    if (settings !== null && inv.invoiceDate < settings.from) {
      inv.state = 'before_start';
      return [];
    }
    return this.settle(inv, names);
  }

  /** Every waiting invoice matched again (a mapping came): the lines that match now go in. */
  settleWaiting(names: NameAnswers | undefined, now: string): Handover[] {
    return this.waiting().flatMap((inv) => {
      inv.updatedAt = now;
      return this.settle(inv, names);
    });
  }

  /** The line as it waits, or why it cannot be mapped (an update's validator reads it). */
  waitingLine({ purchaseId, line }: LineRef): InvoiceLineState | string {
    const inv = this.invoices.get(purchaseId);
    if (!inv) return `no supplier invoice ${purchaseId} has been confirmed here`;
    const found = inv.lines[line];
    if (!found) return `invoice ${purchaseId} has no line ${line} (it has ${inv.lines.length})`;
    if (inv.state !== 'waiting' || found.match)
      return `line ${line} of invoice ${purchaseId} is not waiting for a mapping (the invoice is ${inv.state})`;
    return found;
  }

  /** The operator's answer for one line, remembered for the supplier; then everything waiting is matched again. */
  mapLine(ref: LineRef, target: MappingTarget, names: NameAnswers | undefined, now: string): Handover[] {
    const inv = this.invoices.get(ref.purchaseId)!;
    const line = inv.lines[ref.line]!;
    this.mappings.put({
      supplierPin: inv.supplierPin,
      by: line.code ? 'code' : 'description',
      key: line.code ?? line.description,
      ...target,
      source: 'learned',
    } as Mapping);
    line.match = 'notStock' in target ? { notStock: true } : { ...target, by: 'operator' };
    delete line.candidates;
    if (!('notStock' in target)) this.totals.matchedBy.operator += 1;
    return this.settleWaiting(names, now);
  }

  /** A stocked line and why it cannot be corrected, or the line (an update's validator reads it). */
  stockedLine({ purchaseId, line }: LineRef): InvoiceLineState | string {
    const inv = this.invoices.get(purchaseId);
    if (!inv)
      return (
        `no supplier invoice ${purchaseId} is held here: give its invoiceDate to find one settled over an hour ago ` +
        'in its book'
      );
    const found = inv.lines[line];
    if (!found) return `invoice ${purchaseId} has no line ${line} (it has ${inv.lines.length})`;
    if (inv.status !== 'confirmed' || !found.match || 'notStock' in found.match || found.added <= 0)
      return `line ${line} of invoice ${purchaseId} has added no stock to move (the invoice is ${inv.state})`;
    return found;
  }

  /** Moves what a line added onto another item, once: asked again for the same item, nothing moves. */
  correctLine(ref: LineRef, itemId: string, factor: number, now: string): Handover[] {
    const inv = this.invoices.get(ref.purchaseId)!;
    const line = inv.lines[ref.line]!;
    const current = line.match as { itemId: string; factor: number };
    if (current.itemId === itemId && current.factor === factor) return [];
    inv.corrections += 1;
    inv.updatedAt = now;
    const step = `fix${inv.corrections}`;
    const quantity = line.quantity * factor;
    const out = this.stockLine(
      inv,
      line,
      current.itemId,
      'DEDUCT',
      line.added,
      line.unitPrice / current.factor,
      `${step}-out`,
    );
    const back = this.stockLine(inv, line, itemId, 'ADD', quantity, line.unitPrice / factor, `${step}-in`);
    line.match = { itemId, factor, by: 'operator' };
    line.added = quantity;
    this.mappings.put({
      supplierPin: inv.supplierPin,
      by: line.code ? 'code' : 'description',
      key: line.code ?? line.description,
      itemId,
      factor,
      source: 'learned',
    });
    return [{ purchaseId: inv.purchaseId, branch: inv.branch, lines: [out, back] }];
  }

  invoice(purchaseId: string): InvoiceStock | undefined {
    return this.invoices.get(purchaseId);
  }

  waiting(): InvoiceStock[] {
    return [...this.invoices.values()].filter((inv) => inv.state === 'waiting');
  }

  state(): StockInState {
    const invoices = [...this.invoices.values()];
    return {
      businessId: this.businessId,
      settings: this.settings,
      invoices,
      totals: { ...this.totals, linesWaiting: this.linesWaiting() },
    };
  }

  /** An invoice read back from its book (a take-back, a new round, a correction): held here again until it settles. */
  restore(inv: InvoiceStock): void {
    if (!this.invoices.has(inv.purchaseId)) this.invoices.set(inv.purchaseId, inv);
  }

  /** Settled invoices untouched since `before`, as their books keep them; those waiting for a person stay here. */
  settledBefore(before: string): InvoiceStock[] {
    return [...this.invoices.values()].filter((inv) => inv.state !== 'waiting' && inv.updatedAt <= before).map(record);
  }

  forget(purchaseIds: readonly string[]): void {
    for (const id of purchaseIds) this.invoices.delete(id);
  }

  get held(): number {
    return this.invoices.size;
  }

  /** What the next run needs: the invoices still held here (the mappings are in their buckets). */
  carry(): Omit<StockInCarry, 'schema'> {
    const invoices = [...this.invoices.values()].map((inv) => (inv.state === 'waiting' ? inv : record(inv)));
    return {
      settings: this.settings,
      taskQueue: this.taskQueue ?? '',
      invoices,
      mappings: [],
      totals: { ...this.totals, linesWaiting: this.linesWaiting() },
    };
  }

  private linesWaiting(): number {
    return this.waiting().reduce((n, inv) => n + inv.lines.filter((l) => !l.match).length, 0);
  }

  /** Matches what it can; hands over each matched stock line not yet added (unless all-or-nothing still waits). */
  private settle(inv: InvoiceStock, names: NameAnswers | undefined): Handover[] {
    for (const line of inv.lines) {
      if (line.match) continue;
      const found = matchLine(this.mappings, names, inv.supplierPin, line);
      if (found) {
        line.match = 'notStock' in found ? { notStock: true } : found;
        if (!('notStock' in found)) this.totals.matchedBy[found.by] += 1;
        delete line.candidates;
      } else if (names) {
        line.candidates = names[normalise(line.description)]?.candidates ?? [];
      }
    }
    const waiting = inv.lines.filter((l) => !l.match);
    if (waiting.length > 0 && this.settings?.allOrNothing) {
      inv.state = 'waiting';
      return [];
    }
    const lines: StockLine[] = [];
    for (const line of inv.lines) {
      const match = line.match;
      if (!match || 'notStock' in match || line.added > 0 || line.quantity <= 0) continue;
      const quantity = line.quantity * match.factor;
      lines.push(this.stockLine(inv, line, match.itemId, 'ADD', quantity, line.unitPrice / match.factor, 'add'));
      line.added = quantity;
      this.totals.linesAdded += 1;
    }
    const anyStock = inv.lines.some((l) => l.match && !('notStock' in l.match));
    const before = inv.state;
    inv.state = waiting.length > 0 ? 'waiting' : anyStock ? 'added' : 'not_stock';
    if (inv.state === 'added' && before !== 'added') this.totals.invoicesAdded += 1;
    return lines.length === 0 ? [] : [{ purchaseId: inv.purchaseId, branch: inv.branch, lines }];
  }

  /** Everything the round added comes off its items; what waited is forgotten with the confirmation. */
  private takeBack(inv: InvoiceStock): Handover[] {
    const lines: StockLine[] = [];
    for (const line of inv.lines) {
      const match = line.match;
      if (match && !('notStock' in match) && line.added > 0) {
        lines.push(
          this.stockLine(inv, line, match.itemId, 'DEDUCT', line.added, line.unitPrice / match.factor, 'back'),
        );
        line.added = 0;
        this.totals.linesTakenBack += 1;
      }
    }
    if (inv.state !== 'before_start') inv.state = lines.length > 0 ? 'taken_back' : 'not_confirmed';
    return lines.length === 0 ? [] : [{ purchaseId: inv.purchaseId, branch: inv.branch, lines }];
  }

  private stockLine(
    inv: InvoiceStock,
    line: InvoiceLineState,
    itemId: string,
    action: 'ADD' | 'DEDUCT',
    quantity: number,
    unitPrice: number,
    step: string,
  ): StockLine {
    const lineId = stockInReferenceId(this.businessId, inv.purchaseId, line.line, inv.round, step);
    // Prices to the cent: a carton's price split by the piece need not divide evenly.
    return {
      itemId,
      action,
      quantity,
      unitPrice: Math.round(unitPrice * 100) / 100,
      lineId,
      saleWorkflowId: this.processId,
    };
  }
}

/** A settled invoice as kept: one holding no stock keeps no lines (a new confirmation brings them again). */
function record(inv: InvoiceStock): InvoiceStock {
  if (inv.lines.every((l) => l.added === 0)) return { ...inv, lines: [] };
  return { ...inv, lines: inv.lines.map(({ candidates: _, ...line }) => line) };
}
