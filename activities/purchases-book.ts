/** Reads and writes of the purchases books: updates-with-start, one per book a batch touches (Temporal only). */
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  PURCHASES_BOOK_WORKFLOW_TYPE,
  purchasesBookId,
  readBookUpdate,
  writeBookUpdate,
  type BookRead,
  type BookWrite,
  type BookedPurchase,
  type PurchasesBookInput,
} from '../src/contracts/purchases-book.js';
import { BusinessId } from '../src/contracts/search-attributes.js';
import { whileAlive } from './api-call.js';
import { temporalClientOf, updateOfOwnWorkflow, type ActivityDeps } from './deps.js';

export interface PurchaseBooksTarget {
  businessId: string;
  /** The caller's own queue: the books run beside the sync and the stock-in of one fleet. */
  taskQueue: string;
  horizonDays: number;
}

export type ReadPurchaseBooksInput = PurchaseBooksTarget & { invoices: BookRead[]; stock?: boolean };
export type WritePurchaseBooksInput = PurchaseBooksTarget & { records: BookWrite[] };

/** The invoices grouped by the book that holds each. */
function byBook<T extends BookRead>(target: PurchaseBooksTarget, invoices: readonly T[]) {
  const books = new Map<string, { date: string; invoices: T[] }>();
  for (const invoice of invoices) {
    const workflowId = purchasesBookId(target.taskQueue, target.businessId, invoice.invoiceDate, invoice.id);
    const book = books.get(workflowId) ?? { date: invoice.invoiceDate, invoices: [] };
    book.invoices.push(invoice);
    books.set(workflowId, book);
  }
  return books;
}

export function createPurchasesBookActivities(deps: Pick<ActivityDeps, 'temporal'>) {
  function startOf(target: PurchaseBooksTarget, workflowId: string, date: string) {
    return new WithStartWorkflowOperation(PURCHASES_BOOK_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: target.taskQueue,
      args: [{ businessId: target.businessId, date, horizonDays: target.horizonDays } satisfies PurchasesBookInput],
      // The book of a day may have ended (past the horizon): a new one starts, empty.
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [{ key: BusinessId, value: target.businessId }],
      staticSummary: `Supplier invoices of ${target.businessId} dated ${date}`,
    });
  }

  return {
    /** What the books hold of these invoices; an invoice no book holds is absent. */
    async readPurchaseBooks(input: ReadPurchaseBooksInput): Promise<Record<string, BookedPurchase>> {
      const client = temporalClientOf(deps, 'readPurchaseBooks');
      const found: Record<string, BookedPurchase> = {};
      await whileAlive(() =>
        Promise.all(
          [...byBook(input, input.invoices)].map(async ([workflowId, book]) => {
            const records = await updateOfOwnWorkflow(client, () =>
              client.workflow.executeUpdateWithStart(readBookUpdate, {
                args: [{ ids: book.invoices.map((i) => i.id), ...(input.stock ? { stock: true } : {}) }],
                startWorkflowOperation: startOf(input, workflowId, book.date),
              }),
            );
            Object.assign(found, records);
          }),
        ),
      );
      return found;
    },

    /** Each write replaces the parts it gives: written again after a retry, the books end the same. */
    async writePurchaseBooks(input: WritePurchaseBooksInput): Promise<{ books: number }> {
      const client = temporalClientOf(deps, 'writePurchaseBooks');
      const books = byBook(input, input.records);
      await whileAlive(() =>
        Promise.all(
          [...books].map(([workflowId, book]) =>
            updateOfOwnWorkflow(client, () =>
              client.workflow.executeUpdateWithStart(writeBookUpdate, {
                args: [{ records: book.invoices.map(({ invoiceDate: _, ...write }) => write) }],
                startWorkflowOperation: startOf(input, workflowId, book.date),
              }),
            ),
          ),
        ),
      );
      return { books: books.size };
    },
  };
}
