/**
 * Client of the compliance service (shared/api/compliance-api.md). Validates every request against the
 * documented limits before sending, parses answers leniently forward (schemas.ts), and returns each result
 * with its response metadata so rate-limit headers and `Idempotent-Replayed` are never lost.
 *
 * Failures are one type, `ApiError`, whose `retry` says whether repeating the call can duplicate a document:
 * each request below declares whether it is idempotent (a read, a write carrying an `Idempotency-Key`, or
 * an operation the service makes safe to repeat, C23/C35).
 */
import type { z } from 'zod';
import { assertCredential } from '../config/credentials.js';
import { callBinary, callJson, type ApiResult } from '../http/json-api.js';
import type { RateLimitGate } from '../http/rate-limit-gate.js';
import {
  HttpTransport,
  type HttpMethod,
  type HttpObserver,
  type HttpRequest,
  type QueryValue,
} from '../http/transport.js';
import {
  RequestValidator,
  validateBusinessId,
  validateIdempotencyKey,
  validatePathId,
  type CodeListsQuery,
  type CreateCreditNoteInput,
  type CreateItemInput,
  type CreateSaleInput,
  type ItemClassificationsQuery,
  type ListPurchasesQuery,
  type RegisterItemInput,
  type RequestInput,
  type StockAdjustmentInput,
} from './requests.js';
import {
  BusinessListEnvelopeSchema,
  CodeListsEnvelopeSchema,
  IdentityEnvelopeSchema,
  ItemClassificationsEnvelopeSchema,
  ItemEnvelopeSchema,
  ItemListEnvelopeSchema,
  PullResultEnvelopeSchema,
  PurchasePageEnvelopeSchema,
  SaleEnvelopeSchema,
  StockAdjustmentEnvelopeSchema,
  type Business,
  type CodeList,
  type Identity,
  type Item,
  type ItemClassification,
  type Pagination,
  type PullResult,
  type Purchase,
  type Sale,
  type StockAdjustmentResult,
} from './schemas.js';

interface CommonOptions {
  apiKey: string;
  /** Business to act for when a call does not name one; omit for a business-bound key. */
  businessId?: string;
  /** Accept http(s) callback URLs to loopback hosts; for local stacks only (C48). */
  allowLoopbackCallbacks?: boolean;
  /** Name of the setting the key came from, so a malformed key is reported against it. */
  credentialSetting?: string;
}

export type ComplianceClientOptions = CommonOptions &
  (
    | {
        baseUrl: string;
        /** Whole-call timeout in ms (transport default 30 s). */
        timeoutMs?: number;
        connectTimeoutMs?: number;
        userAgent?: string;
        /** Sees every request and answer (the worker's rate-budget metrics). */
        observer?: HttpObserver;
        /** Holds requests back while the service's rate-limit headers say its window is spent (the worker's). */
        rateLimitGate?: RateLimitGate;
      }
    | {
        /** A transport owned by the caller (it closes it). */
        transport: HttpTransport;
      }
  );

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the whole-call timeout for this call. */
  timeoutMs?: number;
}

export interface BusinessCallOptions extends CallOptions {
  /** Overrides the configured business for this call. */
  businessId?: string;
}

export interface PurchasePage {
  purchases: Purchase[];
  pagination: Pagination;
}

export interface ReceiptDocument {
  contentType: string;
  bytes: Buffer;
}

/** Every path, in one place (C51). */
const PATHS = {
  identity: '/v1/identity',
  businesses: '/v1/businesses',
  sales: '/v1/sales',
  sale: (id: string) => `/v1/sales/${encodeURIComponent(id)}`,
  saleRetry: (id: string) => `/v1/sales/${encodeURIComponent(id)}/retry`,
  saleReceipt: (id: string) => `/v1/sales/${encodeURIComponent(id)}/receipt`,
  creditNotes: '/v1/credit-notes',
  stockAdjustments: '/v1/stock/adjustments',
  items: '/v1/items',
  itemRegister: (id: string) => `/v1/items/${encodeURIComponent(id)}/register`,
  purchases: '/v1/purchases',
  purchasesPull: '/v1/purchases/pull',
  codeLists: '/v1/lookups/code-lists',
  itemClassifications: '/v1/lookups/item-classifications',
} as const;

/** Query parameter names of the purchases list, in one place (C27). */
const PURCHASE_QUERY = {
  cursor: 'cursor',
  pageSize: 'pageSize',
  status: 'status',
  fromDate: 'fromDate',
  toDate: 'toDate',
} as const;

interface RequestSpec {
  operation: string;
  method: HttpMethod;
  path: string;
  idempotent: boolean;
  /** Whether the call acts for a business, i.e. carries `businessId`. */
  businessScoped: boolean;
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
}

export class ComplianceClient {
  private readonly transport: HttpTransport;
  private readonly ownsTransport: boolean;
  private readonly validator: RequestValidator;
  private readonly businessId: string | undefined;
  // Private field: never enumerated, so logging the client cannot print the key.
  readonly #apiKey: string;

  constructor(options: ComplianceClientOptions) {
    this.#apiKey = assertCredential(
      'complianceApiKey',
      options.credentialSetting ?? 'COMPLIANCE_API_KEY',
      options.apiKey,
    );
    this.businessId = validateBusinessId('ComplianceClient', options.businessId);
    this.validator = new RequestValidator({ allowLoopbackCallbacks: options.allowLoopbackCallbacks === true });
    if ('transport' in options) {
      this.transport = options.transport;
      this.ownsTransport = false;
    } else {
      this.transport = new HttpTransport({
        service: 'compliance',
        baseUrl: options.baseUrl,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
        ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }),
        ...(options.observer === undefined ? {} : { observer: options.observer }),
        ...(options.rateLimitGate === undefined ? {} : { rateLimitGate: options.rateLimitGate }),
      });
      this.ownsTransport = true;
    }
  }

  // ------------------------------------------------------------------------------------------------------
  // Identity and businesses (no business scope, C19/C20)
  // ------------------------------------------------------------------------------------------------------

  /** What the key can do: application, environment, scopes, bound business. */
  async getIdentity(opts?: CallOptions): Promise<ApiResult<Identity>> {
    return this.call(
      { operation: 'getIdentity', method: 'GET', path: PATHS.identity, idempotent: true, businessScoped: false },
      IdentityEnvelopeSchema,
      (body) => body.data,
      opts,
    );
  }

  /** The businesses (with their branches) the key may act for. */
  async listBusinesses(opts?: CallOptions): Promise<ApiResult<Business[]>> {
    return this.call(
      { operation: 'listBusinesses', method: 'GET', path: PATHS.businesses, idempotent: true, businessScoped: false },
      BusinessListEnvelopeSchema,
      (body) => body.data.businesses,
      opts,
    );
  }

  // ------------------------------------------------------------------------------------------------------
  // Sales and credit notes
  // ------------------------------------------------------------------------------------------------------

  /** One sale or credit note. */
  async getSale(saleId: string, opts?: BusinessCallOptions): Promise<ApiResult<Sale>> {
    const id = validatePathId('getSale', 'saleId', saleId);
    return this.saleCall({ operation: 'getSale', method: 'GET', path: PATHS.sale(id), idempotent: true }, opts);
  }

  /**
   * Issues a sale. `meta.status` tells the outcome: 201 signed, 202 in flight, 200 with
   * `meta.idempotentReplayed` for a repeat of `idempotencyKey`. A rejection is an `ApiError` 422
   * `authority_rejected` whose `details.sale` is the filed document (see `saleFromError`).
   */
  async createSale(
    input: CreateSaleInput,
    idempotencyKey: string,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<Sale>> {
    return this.fileDocument('createSale', PATHS.sales, input, idempotencyKey, opts);
  }

  /** Resubmits a document that did not reach the tax authority or was rejected; safe to repeat (C35). */
  async retrySale(saleId: string, opts?: BusinessCallOptions): Promise<ApiResult<Sale>> {
    const id = validatePathId('retrySale', 'saleId', saleId);
    return this.saleCall({ operation: 'retrySale', method: 'POST', path: PATHS.saleRetry(id), idempotent: true }, opts);
  }

  /**
   * Reverses an accepted sale in full. Same outcomes as `createSale`; a second credit note for the same
   * sale is a 422 `already_credited` naming the first in `details.creditNoteId`.
   */
  async createCreditNote(
    input: CreateCreditNoteInput,
    idempotencyKey: string,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<Sale>> {
    return this.fileDocument('createCreditNote', PATHS.creditNotes, input, idempotencyKey, opts);
  }

  /** The signed receipt as a PDF; 409 `receipt_not_available` while the document has none (C25). */
  async downloadReceipt(saleId: string, opts?: BusinessCallOptions): Promise<ApiResult<ReceiptDocument>> {
    const id = validatePathId('downloadReceipt', 'saleId', saleId);
    return callBinary(
      this.transport,
      this.request(
        {
          operation: 'downloadReceipt',
          method: 'GET',
          path: PATHS.saleReceipt(id),
          idempotent: true,
          businessScoped: true,
          headers: { accept: 'application/pdf' },
        },
        opts,
      ),
    );
  }

  // ------------------------------------------------------------------------------------------------------
  // Stock and items
  // ------------------------------------------------------------------------------------------------------

  /** Adds or deducts stock. Not de-duplicated by the service: a failure after sending is ambiguous. */
  async adjustStock(
    input: StockAdjustmentInput,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<StockAdjustmentResult>> {
    const body = this.validator.validate('adjustStock', input);
    return this.call(
      {
        operation: 'adjustStock',
        method: 'POST',
        path: PATHS.stockAdjustments,
        idempotent: false,
        businessScoped: true,
        body,
      },
      StockAdjustmentEnvelopeSchema,
      (answer) => answer.data,
      opts,
    );
  }

  /** Every item of the business that is not deleted (not paginated). */
  async listItems(opts?: BusinessCallOptions): Promise<ApiResult<Item[]>> {
    return this.call(
      { operation: 'listItems', method: 'GET', path: PATHS.items, idempotent: true, businessScoped: true },
      ItemListEnvelopeSchema,
      (body) => body.data.items,
      opts,
    );
  }

  /**
   * Creates an item (`PENDING`). Not idempotent: a repeat after an ambiguous failure answers 409
   * `already_exists` with the existing item in `details.item` (see `itemFromError`), which callers adopt.
   */
  async createItem(input: CreateItemInput, opts?: BusinessCallOptions): Promise<ApiResult<Item>> {
    const body = this.validator.validate('createItem', input);
    return this.itemCall({ operation: 'createItem', method: 'POST', path: PATHS.items, idempotent: false, body }, opts);
  }

  /** Registers an item with the tax authority; safe to repeat (C23). A 422 carries the item in `details.item`. */
  async registerItem(
    itemId: string,
    input: RegisterItemInput = {},
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<Item>> {
    const id = validatePathId('registerItem', 'itemId', itemId);
    const body = this.validator.validate('registerItem', input);
    return this.itemCall(
      { operation: 'registerItem', method: 'POST', path: PATHS.itemRegister(id), idempotent: true, body },
      opts,
    );
  }

  // ------------------------------------------------------------------------------------------------------
  // Purchases
  // ------------------------------------------------------------------------------------------------------

  /** Fetches the latest supplier invoices from the tax authority into the service (reads only, C26). */
  async pullPurchases(opts?: BusinessCallOptions): Promise<ApiResult<PullResult>> {
    return this.call(
      { operation: 'pullPurchases', method: 'POST', path: PATHS.purchasesPull, idempotent: true, businessScoped: true },
      PullResultEnvelopeSchema,
      (body) => body.data,
      opts,
    );
  }

  /** One page of stored supplier invoices, newest first. */
  async listPurchases(query: ListPurchasesQuery = {}, opts?: BusinessCallOptions): Promise<ApiResult<PurchasePage>> {
    const valid = this.validator.validate('listPurchases', query);
    return this.call(
      {
        operation: 'listPurchases',
        method: 'GET',
        path: PATHS.purchases,
        idempotent: true,
        businessScoped: true,
        query: {
          [PURCHASE_QUERY.cursor]: valid.cursor,
          [PURCHASE_QUERY.pageSize]: valid.pageSize,
          [PURCHASE_QUERY.status]: valid.status,
          [PURCHASE_QUERY.fromDate]: valid.fromDate,
          [PURCHASE_QUERY.toDate]: valid.toDate,
        },
      },
      PurchasePageEnvelopeSchema,
      (body) => ({ purchases: body.data.purchases, pagination: body.pagination }),
      opts,
    );
  }

  /**
   * Every page from `query.cursor` (or the first) to the last, passing `nextCursor` back unchanged.
   * Stops with an error if the service hands back a cursor it already gave, rather than looping forever.
   */
  async *iteratePurchasePages(
    query: ListPurchasesQuery = {},
    opts?: BusinessCallOptions,
  ): AsyncGenerator<ApiResult<PurchasePage>, void, undefined> {
    let cursor = query.cursor;
    const seen = new Set<string>(cursor === undefined ? [] : [cursor]);
    for (;;) {
      const page = await this.listPurchases({ ...query, cursor }, opts);
      yield page;
      const next = page.data.pagination.nextCursor;
      if (next === null || next === '') return;
      if (seen.has(next)) {
        throw new Error(`listPurchases: the compliance service returned cursor ${JSON.stringify(next)} twice`);
      }
      seen.add(next);
      cursor = next;
    }
  }

  /** Every supplier invoice matching `query`, one at a time, fetching pages as needed. */
  async *iteratePurchases(
    query: ListPurchasesQuery = {},
    opts?: BusinessCallOptions,
  ): AsyncGenerator<Purchase, void, undefined> {
    for await (const page of this.iteratePurchasePages(query, opts)) yield* page.data.purchases;
  }

  // ------------------------------------------------------------------------------------------------------
  // Lookups (no business scope, C24)
  // ------------------------------------------------------------------------------------------------------

  async listCodeLists(query: CodeListsQuery = {}, opts?: CallOptions): Promise<ApiResult<CodeList[]>> {
    const valid = this.validator.validate('listCodeLists', query);
    return this.call(
      {
        operation: 'listCodeLists',
        method: 'GET',
        path: PATHS.codeLists,
        idempotent: true,
        businessScoped: false,
        query: { listId: valid.listId },
      },
      CodeListsEnvelopeSchema,
      (body) => body.data.codeLists,
      opts,
    );
  }

  async listItemClassifications(
    query: ItemClassificationsQuery = {},
    opts?: CallOptions,
  ): Promise<ApiResult<ItemClassification[]>> {
    const valid = this.validator.validate('listItemClassifications', query);
    return this.call(
      {
        operation: 'listItemClassifications',
        method: 'GET',
        path: PATHS.itemClassifications,
        idempotent: true,
        businessScoped: false,
        query: { search: valid.search },
      },
      ItemClassificationsEnvelopeSchema,
      (body) => body.data.classifications,
      opts,
    );
  }

  /** Closes the connection pool, unless the transport was supplied by the caller. */
  async close(): Promise<void> {
    if (this.ownsTransport) await this.transport.close();
  }

  // ------------------------------------------------------------------------------------------------------
  // Plumbing
  // ------------------------------------------------------------------------------------------------------

  /**
   * Files a sale or credit note under `idempotencyKey`: a repeat with the same key returns the original, so it is safe
   * to send again.
   */
  private fileDocument<Op extends 'createSale' | 'createCreditNote'>(
    operation: Op,
    path: string,
    input: RequestInput<Op>,
    idempotencyKey: string,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<Sale>> {
    const key = validateIdempotencyKey(operation, idempotencyKey);
    const body = this.validator.validate(operation, input);
    return this.saleCall(
      { operation, method: 'POST', path, idempotent: true, body, headers: { 'idempotency-key': key } },
      opts,
    );
  }

  private saleCall(spec: Omit<RequestSpec, 'businessScoped'>, opts?: BusinessCallOptions): Promise<ApiResult<Sale>> {
    return this.call({ ...spec, businessScoped: true }, SaleEnvelopeSchema, (body) => body.data.sale, opts);
  }

  private itemCall(spec: Omit<RequestSpec, 'businessScoped'>, opts?: BusinessCallOptions): Promise<ApiResult<Item>> {
    return this.call({ ...spec, businessScoped: true }, ItemEnvelopeSchema, (body) => body.data.item, opts);
  }

  /**
   * Sends `spec`, parses the answer with `schema` and returns the part of it `pick` takes, with the answer's metadata.
   */
  private async call<S extends z.ZodType, T>(
    spec: RequestSpec,
    schema: S,
    pick: (body: z.output<S>) => T,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<T>> {
    const res = await callJson(this.transport, this.request(spec, opts), schema);
    return { data: pick(res.data), meta: res.meta };
  }

  private request(spec: RequestSpec, opts: BusinessCallOptions = {}): HttpRequest {
    const query: Record<string, QueryValue> = { ...spec.query };
    if (spec.businessScoped) {
      const businessId = validateBusinessId(spec.operation, opts.businessId) ?? this.businessId;
      if (businessId !== undefined) query.businessId = businessId;
    }
    return {
      operation: spec.operation,
      method: spec.method,
      path: spec.path,
      query,
      headers: { ...spec.headers, 'x-api-key': this.#apiKey },
      ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
      idempotent: spec.idempotent,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
    };
  }
}
