/** One activity per compliance API call; documents are kept as FiscalDocument, so no callback URL leaks. */
import { ApplicationFailure } from '@temporalio/common';
import {
  FiscalDocumentSchema,
  authorityErrorsFromError,
  isRegistered,
  itemFromError,
  saleFromError,
  type Sale,
} from '../src/compliance/schemas.js';
import { isInFlight, isSigned } from '../src/contracts/compliance-rules.js';
import type { ApiResult } from '../src/http/json-api.js';
import { ApiError } from '../src/http/errors.js';
import { callApi, queuedMs, whileAlive } from './api-call.js';
import type { ActivityDeps } from './deps.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { documentInFlight } from './failures.js';
import type {
  AdjustStockInput,
  AdjustStockResult,
  CheckItemsInput,
  CreateCreditNoteInput,
  CreateSaleInput,
  DocumentRef,
  ItemCheck,
  RegisterItemResult,
  ServiceSaleRecord,
  SignSaleInput,
  SignSaleResult,
  SubmissionResult,
} from './types.js';
import type { FiscalDocument } from '../src/contracts/sale.js';
import type { HandOverStockInput } from './stock-ledger.js';
import { fiscalDayEntryOf, type FiscalDayEntries } from '../src/contracts/fiscal-day.js';
import { dayEntriesGatherer } from './day-entries.js';

type ComplianceActivityDeps = Pick<
  ActivityDeps,
  'services' | 'itemRegistry' | 'callbackUrls' | 'settledDocuments' | 'logger' | 'metrics' | 'outages' | 'afterAnswers'
> & {
  /** The stock ledger's hand-over, for a sale signed by signSale; without it the workflow hands over. */
  handOverStock?: (input: HandOverStockInput) => Promise<{ ledgerWorkflowId: string }>;
  /** The day book's entry, for a sale signed by signSale; without it the workflow enters it. */
  enterFiscalDay?: (input: FiscalDayEntries & { taskQueue: string }) => Promise<{ workflowId: string }>;
};

/** `completed` counts as signed only with the receipt values that prove it (C4: never guess "signed"). */
function submissionOutcome(sale: Sale): SubmissionResult['outcome'] {
  if (isSigned(sale)) return 'signed';
  if (isInFlight(sale.status)) return 'in_flight';
  if (sale.status === 'failed') return 'rejected';
  return 'unknown';
}

function submitted({ data, meta }: ApiResult<Sale>, callbackUrl: string | undefined): SubmissionResult {
  return {
    outcome: submissionOutcome(data),
    httpStatus: meta.status,
    replayed: meta.idempotentReplayed,
    document: FiscalDocumentSchema.parse(data),
    causes: [],
    outcomeAnnounced: callbackUrl !== undefined,
  };
}

/** A 422 `authority_rejected` that carries the filed document is an outcome to act on, not a failure (C5, C33). */
function rejected(err: unknown): SubmissionResult | undefined {
  if (!(err instanceof ApiError) || err.status !== 422 || err.code !== 'authority_rejected') return undefined;
  const sale = saleFromError(err);
  if (!sale) return undefined;
  return {
    outcome: submissionOutcome(sale),
    httpStatus: 422,
    replayed: false,
    document: FiscalDocumentSchema.parse(sale),
    causes: authorityErrorsFromError(err).map(({ code, message, itemId, field }) => ({ code, message, itemId, field })),
  };
}

/** A 422 on registration carrying the item and what it lacks: only an operator can fix that. */
function needsFixing(err: unknown): RegisterItemResult | undefined {
  if (!(err instanceof ApiError) || err.status !== 422) return undefined;
  const needs = itemFromError(err)?.needs;
  if (!needs) return undefined;
  const { productType, classificationMapping } = needs;
  return { outcome: 'needs_fixing', needs: { productType, classificationMapping } };
}

export function createComplianceActivities(deps: ComplianceActivityDeps) {
  const { services, itemRegistry, callbackUrls, logger, handOverStock, enterFiscalDay } = deps;

  const enterDay = enterFiscalDay && dayEntriesGatherer(enterFiscalDay, logger, deps.afterAnswers);

  /** Sent after the answer (activities/day-entries.ts); undefined leaves the entry to the workflow. */
  function enterSignedDay(input: SignSaleInput, document: FiscalDocument): { workflowId: string } | undefined {
    const entry = fiscalDayEntryOf(input.businessId, document, Date.now(), input.request.branchId);
    if (!input.dayBook || !enterDay || !entry) return undefined;
    return { workflowId: enterDay(input.dayBook.taskQueue, entry) };
  }

  /** The ledger takes a line once, so a retried activity hands over harmlessly; undefined leaves it to the workflow. */
  async function handOverSigned(input: SignSaleInput, items: ItemCheck[]) {
    if (!input.handOver || !handOverStock) return undefined;
    const tracked = new Set(items.filter((item) => item.stockTracked).map((item) => item.itemId));
    const lines = input.handOver.lines.filter((line) => tracked.has(line.itemId));
    if (lines.length === 0) return undefined;
    const { taskQueue } = input.handOver;
    try {
      // The hand-over heartbeats as the signing's call did: a slow Temporal is no dead worker.
      const { ledgerWorkflowId } = await whileAlive(() =>
        handOverStock({
          businessId: input.businessId,
          ...(input.request.branchId ? { branchId: input.request.branchId } : {}),
          lines,
          taskQueue,
        }),
      );
      return { ledgerWorkflowId };
    } catch (err) {
      logger.warn(
        { err, workflowId: input.workflowId },
        'stock hand-over after signing failed; the sale hands it over',
      );
      return undefined;
    }
  }

  async function submit(
    message: string,
    businessId: string,
    callbackUrl: string | undefined,
    send: (options: { businessId: string; signal: AbortSignal }) => Promise<ApiResult<Sale>>,
  ): Promise<SubmissionResult> {
    const result = await callApi({ ...deps, recover: rejected }, true, async (signal) =>
      submitted(await send({ businessId, signal }), callbackUrl),
    );
    const { document, outcome, httpStatus, replayed, causes } = result;
    // The workflow gets the signed document from this answer: its result callback would only wake it.
    if (outcome === 'signed' && callbackUrl !== undefined) deps.settledDocuments?.signedInAnswer(document.id);
    const codes = causes.map((c) => c.code);
    logger.info(
      { businessId, documentId: document.id, status: document.status, outcome, httpStatus, replayed, causes: codes },
      message,
    );
    return result;
  }

  function readSale({ businessId, documentId }: DocumentRef): Promise<Sale> {
    return callApi(deps, true, async (signal) => {
      return (await services.compliance(businessId).getSale(documentId, { businessId, signal })).data;
    });
  }

  /** The items from the registry (a list call at most); a business lacking one of them is a refusal. */
  async function lookupItems(businessId: string, itemIds: string[], fresh = false): Promise<ItemCheck[]> {
    const lookup = await callApi(deps, true, () => itemRegistry.lookup(businessId, itemIds, { fresh }));
    if (lookup.unknownItemIds.length > 0) {
      const ids = lookup.unknownItemIds;
      throw ApplicationFailure.create({
        type: FAILURE_TYPES.itemNotFound,
        message: `business ${businessId} has no item ${ids.join(', ')}`,
        nonRetryable: true,
        details: [{ businessId, itemIds: ids }],
      });
    }
    return lookup.items;
  }

  function fileSale(input: CreateSaleInput): Promise<SubmissionResult> {
    // The client sends only the documented request fields of `request` (its schemas drop the rest).
    const callbackUrl = callbackUrls?.mint(input.workflowId, input.callbackAnchorMs);
    const body = { ...input.request, callbackUrl };
    return submit('sale submitted', input.businessId, callbackUrl, (options) =>
      services.compliance(input.businessId).createSale(body, input.idempotencyKey, options),
    );
  }

  return {
    async checkItems(input: CheckItemsInput): Promise<{ items: ItemCheck[] }> {
      return { items: await lookupItems(input.businessId, input.itemIds, input.fresh) };
    },

    /** Registers an item with the tax authority (safe to repeat, C23). */
    async registerItem(input: { businessId: string; itemId: string; branchId?: string }): Promise<RegisterItemResult> {
      const { businessId, itemId, branchId } = input;
      return callApi({ ...deps, recover: needsFixing }, true, async (signal) => {
        const body = branchId === undefined ? {} : { branchId };
        const { data: item } = await services.compliance(businessId).registerItem(itemId, body, { businessId, signal });
        if (!isRegistered(item)) {
          // A 200 must mean REGISTERED; anything else is read again on the next attempt.
          throw ApplicationFailure.create({
            type: FAILURE_TYPES.unexpectedResponse,
            message: `registerItem answered 200 but item ${item.id} is ${item.registrationStatus}`,
          });
        }
        itemRegistry.remember(businessId, item);
        return { outcome: 'registered' };
      });
    },

    /** Issues the sale; 201 signed, 202 in flight, 422 rejected (with causes), 200 a replay of the key. */
    createSale: fileSale,

    /** The item check and the sale in one dispatch; unregistered items come back unfiled, for the workflow. */
    async signSale(input: SignSaleInput): Promise<SignSaleResult> {
      const items = await lookupItems(input.businessId, input.itemIds);
      if (items.some((item) => !item.registered)) return { items };
      const submission = await fileSale(input);
      if (!isSigned(submission.document)) return { items, submission };
      const dayBook = enterSignedDay(input, submission.document);
      const handedOver = await handOverSigned(input, items);
      return { items, submission, ...(handedOver ? { handedOver } : {}), ...(dayBook ? { dayBook } : {}) };
    },

    /** Resubmits a failed document (safe to repeat, C35). */
    async retrySale(input: DocumentRef): Promise<SubmissionResult> {
      return submit('document resubmitted', input.businessId, undefined, (options) =>
        services.compliance(input.businessId).retrySale(input.documentId, options),
      );
    },

    async getDocument(input: DocumentRef): Promise<{ document: FiscalDocument }> {
      return { document: FiscalDocumentSchema.parse(await readSale(input)) };
    },

    /** A refund's read of its sale when the sale's own record is gone. */
    async readSaleRecord(input: DocumentRef): Promise<ServiceSaleRecord> {
      const sale = await readSale(input);
      const lines = sale.lines.map(({ itemId, quantity, unitPrice }) => ({ itemId, quantity, unitPrice }));
      return { document: FiscalDocumentSchema.parse(sale), saleDate: sale.saleDate, lines };
    },

    /** Fails with a retryable, benign `document_in_flight` while undecided: the retry policy is the polling loop. */
    async awaitDocumentOutcome(input: DocumentRef): Promise<{ document: FiscalDocument }> {
      const sale = await readSale(input);
      if (isInFlight(sale.status)) throw documentInFlight(sale.id, sale.status);
      return { document: FiscalDocumentSchema.parse(sale) };
    },

    /** One stock movement. Not de-duplicated by the service: a failure after sending is `ambiguous_write`. */
    async adjustStock(input: AdjustStockInput): Promise<AdjustStockResult> {
      const waited = queuedMs();
      return callApi(deps, false, async (signal) => {
        const { businessId } = input;
        const { data } = await services.compliance(businessId).adjustStock(input, { businessId, signal });
        return { movementId: data.movementId, quantityOnHand: data.quantityOnHand, queuedMs: waited };
      });
    },

    /** A second credit note is the non-retryable `already_credited` (details[0].creditNoteId). */
    async createCreditNote(input: CreateCreditNoteInput): Promise<SubmissionResult> {
      const body = { ...input, callbackUrl: callbackUrls?.mint(input.workflowId, input.callbackAnchorMs) };
      return submit('credit note submitted', input.businessId, body.callbackUrl, (options) =>
        services.compliance(input.businessId).createCreditNote(body, input.idempotencyKey, options),
      );
    },
  };
}
