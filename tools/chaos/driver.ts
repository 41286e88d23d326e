/**
 * The till of a chaos run: starts every planned sale at its time through the SalesClient, and asks for the planned
 * refunds once the receipt is out (seen in the sandbox, as a till sees it printed). Calls that meet the server's
 * restart or a timeout are repeated; every call goes into the operation history.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SaleInputError, SaleOperationError } from '../../src/client/errors.js';
import type { SalesClient } from '../../src/client/sales-client.js';
import type { SandboxInspector } from '../../sandbox/inspector.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import type { Operation, OperationHistory } from './history.js';
import { isoDate, type PlannedSale } from './sales.js';

const SIGNED_POLL_MS = 1_500;
const REFUND_RETRY_MS = 1_500;
const MAX_BACKOFF_MS = 5_000;

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : String(err);
}

/** Repeats `call` until it answers, `final(err)` says an error is the answer, or the deadline passes. */
async function repeat<T>(
  op: Operation,
  history: OperationHistory,
  deadline: number,
  call: () => Promise<T>,
  final: (err: unknown) => 'ok' | 'failed' | 'again' | 'soon',
  answered: (value: T) => string,
): Promise<void> {
  let backoff = 250;
  let firstError: string | undefined;
  for (;;) {
    op.attempts++;
    try {
      const value = await call();
      history.end(op, 'ok', answered(value));
      return;
    } catch (err) {
      firstError ??= describe(err);
      const verdict = final(err);
      if (verdict === 'ok' || verdict === 'failed') {
        history.end(op, verdict, describe(err));
        return;
      }
      if (Date.now() >= deadline) {
        history.end(
          op,
          'failed',
          `gave up at the deadline after ${op.attempts} attempts; first error ${firstError}; last ${describe(err)}`,
        );
        return;
      }
      const wait = verdict === 'soon' ? REFUND_RETRY_MS : backoff;
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      await sleep(wait);
    }
  }
}

/** Which sales the sandbox shows signed, read for all waiting refunds at once. */
export class SignedWatch {
  private readonly signed = new Set<string>();
  private polling: Promise<void> | undefined;

  constructor(private readonly inspector: SandboxInspector) {}

  async waitSigned(businessId: string, traderInvoiceNumber: string, deadline: number): Promise<boolean> {
    const key = `${businessId}|${traderInvoiceNumber}`;
    while (!this.signed.has(key)) {
      if (Date.now() >= deadline) return false;
      this.polling ??= this.poll().finally(() => (this.polling = undefined));
      await this.polling;
    }
    return true;
  }

  private async poll(): Promise<void> {
    await sleep(SIGNED_POLL_MS);
    try {
      for (const doc of await this.inspector.documents({ type: 'sale' })) {
        if (doc.sale.status === 'completed' && doc.sale.receipt)
          this.signed.add(`${doc.sale.businessId}|${doc.sale.traderInvoiceNumber}`);
      }
    } catch {
      // The sandbox is in this process; a failed read is simply read again.
    }
  }
}

export interface Driver {
  /** Resolves when every start and every refund has been answered or given up. */
  done: Promise<void>;
}

export function drive(options: {
  sales: readonly PlannedSale[];
  client: SalesClient;
  inspector: SandboxInspector;
  history: OperationHistory;
  /** Epoch ms the plan's times count from. */
  t0: number;
  /** Epoch ms after which nothing is repeated any more. */
  deadline: number;
}): Driver {
  const { client, history, deadline } = options;
  const watch = new SignedWatch(options.inspector);

  const startSale = async (sale: PlannedSale): Promise<boolean> => {
    const { input } = sale;
    const op = history.begin({
      kind: 'start',
      sale: sale.index,
      workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
      businessId: input.businessId,
      traderInvoiceNumber: input.traderInvoiceNumber,
      path: sale.path,
      lines: input.lines,
      refund: sale.refund,
    });
    await repeat(
      op,
      history,
      deadline,
      () => client.startSale(input),
      (err) => (err instanceof SaleInputError ? 'failed' : 'again'),
      (result) => (result.started ? 'started' : 'found already started (an earlier attempt had started it)'),
    );
    return op.outcome === 'ok';
  };

  const refund = async (sale: PlannedSale): Promise<void> => {
    const planned = sale.refund!;
    const { businessId, traderInvoiceNumber } = sale.input;
    const op = history.begin({
      kind: 'refund',
      sale: sale.index,
      workflowId: saleWorkflowId(businessId, traderInvoiceNumber),
      businessId,
      traderInvoiceNumber,
      refund: planned,
    });
    if (!(await watch.waitSigned(businessId, traderInvoiceNumber, deadline))) {
      history.end(op, 'failed', 'the sale was never seen signed, so no refund was asked');
      return;
    }
    const request = {
      reason: planned.reason,
      restock: planned.restock,
      returnDate: isoDate(Date.now()),
      traderInvoiceNumber: planned.traderInvoiceNumber,
    };
    await repeat(
      op,
      history,
      deadline,
      () => client.refund(businessId, traderInvoiceNumber, request),
      (err) => {
        if (!(err instanceof SaleOperationError)) return 'again';
        if (err.failure === 'timed_out') return 'again';
        return 'failed';
      },
      (result) =>
        `credit note ${result.creditNote.id} ${result.creditNote.status}, ${result.stockMovements.length} restock movement(s)`,
    );
  };

  const one = async (sale: PlannedSale): Promise<void> => {
    const wait = options.t0 + sale.startAtMs - Date.now();
    if (wait > 0) await sleep(wait);
    if ((await startSale(sale)) && sale.refund) await refund(sale);
  };
  return { done: Promise.all(options.sales.map(one)).then(() => undefined) };
}
