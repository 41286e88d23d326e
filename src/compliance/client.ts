/**
 * Client of the compliance service (shared/api/compliance-api.md). Requests are checked against the documented limits
 * before sending (requests.ts), answers parsed leniently (schemas.ts), and each result keeps its response metadata.
 * Every request declares whether repeating it can duplicate a document: `ApiError.retry` depends on it (C23, C35).
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
        /** Hosts reached in plain http although not loopback (ALLOW_INSECURE_HTTP): private networks only. */
        insecureHttpHosts?: readonly string[];
        timeoutMs?: number;
        connectTimeoutMs?: number;
        userAgent?: string;
        observer?: HttpObserver;
        rateLimitGate?: RateLimitGate;
      }
    | { /** Owned by the caller, who closes it. */ transport: HttpTransport }
  );

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface BusinessCallOptions extends CallOptions {
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

/** The only API version (C51): every path is built under it in `request`. */
const API_PREFIX = '/v1';

interface RequestSpec {
  operation: string;
  path: string;
  method?: HttpMethod;
  /** False for a write the service does not de-duplicate: a failure after sending it is ambiguous. */
  idempotent?: boolean;
  /** Identity, businesses and lookups act for no business (C19, C20, C24). */
  unscoped?: boolean;
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
}

const segment = encodeURIComponent;

export class ComplianceClient {
  private readonly transport: HttpTransport;
  private readonly ownsTransport: boolean;
  private readonly validator: RequestValidator;
  private readonly businessId: string | undefined;
  // Private field: never enumerated, so logging the client cannot print the key.
  readonly #apiKey: string;

  constructor(options: ComplianceClientOptions) {
    const setting = options.credentialSetting ?? 'COMPLIANCE_API_KEY';
    this.#apiKey = assertCredential('complianceApiKey', setting, options.apiKey);
    this.businessId = validateBusinessId('ComplianceClient', options.businessId);
    this.validator = new RequestValidator({ allowLoopbackCallbacks: options.allowLoopbackCallbacks === true });
    this.ownsTransport = !('transport' in options);
    if ('transport' in options) {
      this.transport = options.transport;
    } else {
      const { baseUrl, insecureHttpHosts, timeoutMs, connectTimeoutMs, userAgent, observer, rateLimitGate } = options;
      this.transport = new HttpTransport({
        service: 'compliance',
        baseUrl,
        insecureHttpHosts,
        ...definedOnly({ timeoutMs, connectTimeoutMs, userAgent, observer, rateLimitGate }),
      });
    }
  }

  async getIdentity(opts?: CallOptions): Promise<ApiResult<Identity>> {
    const spec = { operation: 'getIdentity', path: '/identity', unscoped: true };
    return this.call(spec, IdentityEnvelopeSchema, (body) => body.data, opts);
  }

  async listBusinesses(opts?: CallOptions): Promise<ApiResult<Business[]>> {
    const spec = { operation: 'listBusinesses', path: '/businesses', unscoped: true };
    return this.call(spec, BusinessListEnvelopeSchema, (body) => body.data.businesses, opts);
  }

  async getSale(saleId: string, opts?: BusinessCallOptions): Promise<ApiResult<Sale>> {
    const id = validatePathId('getSale', 'saleId', saleId);
    return this.saleCall({ operation: 'getSale', path: `/sales/${segment(id)}` }, opts);
  }

  /**
   * Issues a sale: 201 signed, 202 in flight, 200 with `meta.idempotentReplayed` for a repeat of `idempotencyKey`. A
   * rejection is an `ApiError` 422 `authority_rejected` whose `details.sale` is the filed document (`saleFromError`).
   */
  async createSale(
    input: CreateSaleInput,
    idempotencyKey: string,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<Sale>> {
    return this.fileDocument('createSale', '/sales', input, idempotencyKey, opts);
  }

  /** Resubmits a document that did not reach the tax authority or was rejected; safe to repeat (C35). */
  async retrySale(saleId: string, opts?: BusinessCallOptions): Promise<ApiResult<Sale>> {
    const id = validatePathId('retrySale', 'saleId', saleId);
    return this.saleCall({ operation: 'retrySale', method: 'POST', path: `/sales/${segment(id)}/retry` }, opts);
  }

  /** Reverses an accepted sale in full; a second one is a 422 `already_credited` naming the first. */
  async createCreditNote(
    input: CreateCreditNoteInput,
    idempotencyKey: string,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<Sale>> {
    return this.fileDocument('createCreditNote', '/credit-notes', input, idempotencyKey, opts);
  }

  /** The signed receipt as a PDF; 409 `receipt_not_available` while the document has none (C25). */
  async downloadReceipt(saleId: string, opts?: BusinessCallOptions): Promise<ApiResult<ReceiptDocument>> {
    const id = validatePathId('downloadReceipt', 'saleId', saleId);
    const path = `/sales/${segment(id)}/receipt`;
    const headers = { accept: 'application/pdf' };
    return callBinary(this.transport, this.request({ operation: 'downloadReceipt', path, headers }, opts));
  }

  /** Adds or deducts stock. Not de-duplicated by the service: a failure after sending is ambiguous. */
  async adjustStock(
    input: StockAdjustmentInput,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<StockAdjustmentResult>> {
    const body = this.validator.validate('adjustStock', input);
    const spec: RequestSpec = {
      operation: 'adjustStock',
      method: 'POST',
      path: '/stock/adjustments',
      idempotent: false,
      body,
    };
    return this.call(spec, StockAdjustmentEnvelopeSchema, (answer) => answer.data, opts);
  }

  /** Not paginated. */
  async listItems(opts?: BusinessCallOptions): Promise<ApiResult<Item[]>> {
    return this.call(
      { operation: 'listItems', path: '/items' },
      ItemListEnvelopeSchema,
      (body) => body.data.items,
      opts,
    );
  }

  /**
   * Creates an item (`PENDING`). Not idempotent: a repeat after an ambiguous failure answers 409 `already_exists`
   * with the existing item in `details.item` (`itemFromError`), which callers adopt.
   */
  async createItem(input: CreateItemInput, opts?: BusinessCallOptions): Promise<ApiResult<Item>> {
    const body = this.validator.validate('createItem', input);
    return this.itemCall({ operation: 'createItem', method: 'POST', path: '/items', idempotent: false, body }, opts);
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
      { operation: 'registerItem', method: 'POST', path: `/items/${segment(id)}/register`, body },
      opts,
    );
  }

  /** Fetches the latest supplier invoices from the tax authority into the service (reads only, C26). */
  async pullPurchases(opts?: BusinessCallOptions): Promise<ApiResult<PullResult>> {
    const spec: RequestSpec = { operation: 'pullPurchases', method: 'POST', path: '/purchases/pull' };
    return this.call(spec, PullResultEnvelopeSchema, (body) => body.data, opts);
  }

  async listPurchases(query: ListPurchasesQuery = {}, opts?: BusinessCallOptions): Promise<ApiResult<PurchasePage>> {
    const valid = this.validator.validate('listPurchases', query);
    const page = ({ data, pagination }: z.output<typeof PurchasePageEnvelopeSchema>) => ({
      purchases: data.purchases,
      pagination,
    });
    return this.call(
      { operation: 'listPurchases', path: '/purchases', query: valid },
      PurchasePageEnvelopeSchema,
      page,
      opts,
    );
  }

  /**
   * Every page from `query.cursor` (or the first) to the last, passing `nextCursor` back unchanged. Stops with an
   * error if the service hands back a cursor it already gave, rather than looping forever.
   */
  async *iteratePurchasePages(
    query: ListPurchasesQuery = {},
    opts?: BusinessCallOptions,
  ): AsyncGenerator<ApiResult<PurchasePage>> {
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

  async *iteratePurchases(query: ListPurchasesQuery = {}, opts?: BusinessCallOptions): AsyncGenerator<Purchase> {
    for await (const page of this.iteratePurchasePages(query, opts)) yield* page.data.purchases;
  }

  async listCodeLists(query: CodeListsQuery = {}, opts?: CallOptions): Promise<ApiResult<CodeList[]>> {
    const { listId } = this.validator.validate('listCodeLists', query);
    const spec = { operation: 'listCodeLists', path: '/lookups/code-lists', unscoped: true, query: { listId } };
    return this.call(spec, CodeListsEnvelopeSchema, (body) => body.data.codeLists, opts);
  }

  async listItemClassifications(
    query: ItemClassificationsQuery = {},
    opts?: CallOptions,
  ): Promise<ApiResult<ItemClassification[]>> {
    const { search } = this.validator.validate('listItemClassifications', query);
    const path = '/lookups/item-classifications';
    const spec = { operation: 'listItemClassifications', path, unscoped: true, query: { search } };
    return this.call(spec, ItemClassificationsEnvelopeSchema, (body) => body.data.classifications, opts);
  }

  async close(): Promise<void> {
    if (this.ownsTransport) await this.transport.close();
  }

  /** Files a sale or credit note under `idempotencyKey`: a repeat returns the original, so it is safe to resend. */
  private fileDocument<Op extends 'createSale' | 'createCreditNote'>(
    operation: Op,
    path: string,
    input: RequestInput<Op>,
    idempotencyKey: string,
    opts?: BusinessCallOptions,
  ): Promise<ApiResult<Sale>> {
    const key = validateIdempotencyKey(operation, idempotencyKey);
    const body = this.validator.validate(operation, input);
    return this.saleCall({ operation, method: 'POST', path, body, headers: { 'idempotency-key': key } }, opts);
  }

  private saleCall(spec: RequestSpec, opts?: BusinessCallOptions): Promise<ApiResult<Sale>> {
    return this.call(spec, SaleEnvelopeSchema, (body) => body.data.sale, opts);
  }

  private itemCall(spec: RequestSpec, opts?: BusinessCallOptions): Promise<ApiResult<Item>> {
    return this.call(spec, ItemEnvelopeSchema, (body) => body.data.item, opts);
  }

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
    if (!spec.unscoped) {
      const businessId = validateBusinessId(spec.operation, opts.businessId) ?? this.businessId;
      if (businessId !== undefined) query.businessId = businessId;
    }
    return {
      operation: spec.operation,
      method: spec.method ?? 'GET',
      path: `${API_PREFIX}${spec.path}`,
      query,
      headers: { ...spec.headers, 'x-api-key': this.#apiKey },
      ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
      idempotent: spec.idempotent ?? true,
      ...definedOnly({ signal: opts.signal, timeoutMs: opts.timeoutMs }),
    };
  }
}

/** `values` without its undefined entries, so that the transport's defaults apply to them. */
function definedOnly<T extends object>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
