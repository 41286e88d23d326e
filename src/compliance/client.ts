/** Each request declares whether repeating it can duplicate a document: `ApiError.retry` depends on it (C23, C35). */
import type { z } from 'zod';
import { assertCredential } from '../config/credentials.js';
import { callJson, type ApiResult } from '../http/json-api.js';
import {
  HttpTransport,
  type HttpMethod,
  type HttpRequest,
  type HttpTransportOptions,
  type QueryValue,
} from '../http/transport.js';
import {
  RequestValidator,
  validateBusinessId,
  validateIdempotencyKey,
  validatePathId,
  type CreateCreditNoteInput,
  type CreateSaleInput,
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
} from './schemas.js';

export type ComplianceClientOptions = Omit<HttpTransportOptions, 'service'> & {
  apiKey: string;
  /** Business to act for when a call does not name one; omit for a business-bound key. */
  businessId?: string;
  /** Accept http(s) callback URLs to loopback hosts; for local stacks only (C48). */
  allowLoopbackCallbacks?: boolean;
  /** The setting the key came from, named when the key is malformed. */
  credentialSetting?: string;
};

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The business to act for, instead of the client's; identity, businesses and lookups act for none. */
  businessId?: string;
}

/** The only API version (C51). */
const API_PREFIX = '/v1';

interface RequestSpec {
  operation: string;
  path: string;
  method?: HttpMethod;
  /** False for a write the service does not de-duplicate: a failure after sending it is ambiguous. */
  idempotent?: boolean;
  /** Identity, businesses and lookups (C19, C20, C24). */
  unscoped?: boolean;
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
}

const segment = encodeURIComponent;

export class ComplianceClient {
  private readonly transport: HttpTransport;
  private readonly validator: RequestValidator;
  private readonly businessId: string | undefined;
  // Private field: never enumerated, so logging the client cannot print the key.
  readonly #apiKey: string;

  constructor(options: ComplianceClientOptions) {
    const { apiKey, businessId, allowLoopbackCallbacks, credentialSetting, ...transport } = options;
    this.#apiKey = assertCredential('complianceApiKey', credentialSetting ?? 'COMPLIANCE_API_KEY', apiKey);
    this.businessId = validateBusinessId('ComplianceClient', businessId);
    this.validator = new RequestValidator({ allowLoopbackCallbacks: allowLoopbackCallbacks === true });
    this.transport = new HttpTransport({ ...transport, service: 'compliance' });
  }

  async getIdentity(opts?: CallOptions) {
    return this.call({ operation: 'getIdentity', path: '/identity', unscoped: true }, IdentityEnvelopeSchema, opts);
  }

  async listBusinesses(opts?: CallOptions) {
    const spec = { operation: 'listBusinesses', path: '/businesses', unscoped: true };
    return this.call(spec, BusinessListEnvelopeSchema, opts, (data) => data.businesses);
  }

  async getSale(saleId: string, opts?: CallOptions) {
    const id = validatePathId('getSale', 'saleId', saleId);
    return this.saleCall({ operation: 'getSale', path: `/sales/${segment(id)}` }, opts);
  }

  /**
   * Issues a sale: 201 signed, 202 in flight, 200 with `meta.idempotentReplayed` for a repeat of `idempotencyKey`. A
   * rejection is an `ApiError` 422 `authority_rejected` whose `details.sale` is the filed document (`saleFromError`).
   */
  async createSale(input: CreateSaleInput, idempotencyKey: string, opts?: CallOptions) {
    return this.fileDocument('createSale', '/sales', input, idempotencyKey, opts);
  }

  /** Resubmits a document that did not reach the tax authority or was rejected; safe to repeat (C35). */
  async retrySale(saleId: string, opts?: CallOptions) {
    const id = validatePathId('retrySale', 'saleId', saleId);
    return this.saleCall({ operation: 'retrySale', method: 'POST', path: `/sales/${segment(id)}/retry` }, opts);
  }

  /** Reverses an accepted sale in full; a second one is a 422 `already_credited` naming the first. */
  async createCreditNote(input: CreateCreditNoteInput, idempotencyKey: string, opts?: CallOptions) {
    return this.fileDocument('createCreditNote', '/credit-notes', input, idempotencyKey, opts);
  }

  /** Adds or deducts stock. Not de-duplicated by the service: a failure after sending is ambiguous. */
  async adjustStock(input: StockAdjustmentInput, opts?: CallOptions) {
    const body = this.validator.validate('adjustStock', input);
    const path = '/stock/adjustments';
    const spec: RequestSpec = { operation: 'adjustStock', method: 'POST', path, idempotent: false, body };
    return this.call(spec, StockAdjustmentEnvelopeSchema, opts);
  }

  /** Not paginated. */
  async listItems(opts?: CallOptions) {
    return this.call({ operation: 'listItems', path: '/items' }, ItemListEnvelopeSchema, opts, (data) => data.items);
  }

  /**
   * Creates an item (C21), `PENDING` until registered. The same `externalId` again is a 409 `already_exists` whose
   * `details.item` is the item the service has. A failure after sending is ambiguous: the item list tells.
   */
  async createItem(input: RequestInput<'createItem'>, opts?: CallOptions) {
    const body = this.validator.validate('createItem', input);
    const spec: RequestSpec = { operation: 'createItem', method: 'POST', path: '/items', idempotent: false, body };
    return this.call(spec, ItemEnvelopeSchema, opts, (data) => data.item);
  }

  /** Registers an item with the tax authority; safe to repeat (C23). A 422 carries the item in `details.item`. */
  async registerItem(itemId: string, input: RequestInput<'registerItem'> = {}, opts?: CallOptions) {
    const id = validatePathId('registerItem', 'itemId', itemId);
    const body = this.validator.validate('registerItem', input);
    const path = `/items/${segment(id)}/register`;
    const spec: RequestSpec = { operation: 'registerItem', method: 'POST', path, body };
    return this.call(spec, ItemEnvelopeSchema, opts, (data) => data.item);
  }

  /** Fetches the latest supplier invoices from the tax authority into the service (reads only, C26). */
  async pullPurchases(opts?: CallOptions) {
    const spec: RequestSpec = { operation: 'pullPurchases', method: 'POST', path: '/purchases/pull' };
    return this.call(spec, PullResultEnvelopeSchema, opts);
  }

  async listPurchases(query: RequestInput<'listPurchases'> = {}, opts?: CallOptions) {
    const valid = this.validator.validate('listPurchases', query);
    const spec = { operation: 'listPurchases', path: '/purchases', query: valid };
    return this.call(spec, PurchasePageEnvelopeSchema, opts, ({ purchases }, { pagination }) => ({
      purchases,
      pagination,
    }));
  }

  /** Every page from `query.cursor` (or the first) to the last; a cursor given twice is an error, not a loop. */
  async *iteratePurchasePages(query: RequestInput<'listPurchases'> = {}, opts?: CallOptions) {
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

  async listCodeLists(query: RequestInput<'listCodeLists'> = {}, opts?: CallOptions) {
    const valid = this.validator.validate('listCodeLists', query);
    const spec = { operation: 'listCodeLists', path: '/lookups/code-lists', unscoped: true, query: valid };
    return this.call(spec, CodeListsEnvelopeSchema, opts, (data) => data.codeLists);
  }

  /** The authority's item classifications (C24), every one unless `search` narrows them by code or name. */
  async listItemClassifications(query: RequestInput<'listItemClassifications'> = {}, opts?: CallOptions) {
    const valid = this.validator.validate('listItemClassifications', query);
    const path = '/lookups/item-classifications';
    const spec = { operation: 'listItemClassifications', path, unscoped: true, query: valid };
    return this.call(spec, ItemClassificationsEnvelopeSchema, opts, (data) => data.classifications);
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  /** Files a sale or credit note under `idempotencyKey`: a repeat returns the original, so it is safe to resend. */
  private fileDocument<Op extends 'createSale' | 'createCreditNote'>(
    operation: Op,
    path: string,
    input: RequestInput<Op>,
    idempotencyKey: string,
    opts?: CallOptions,
  ) {
    const key = validateIdempotencyKey(operation, idempotencyKey);
    const body = this.validator.validate(operation, input);
    return this.saleCall({ operation, method: 'POST', path, body, headers: { 'idempotency-key': key } }, opts);
  }

  private saleCall(spec: RequestSpec, opts?: CallOptions) {
    return this.call(spec, SaleEnvelopeSchema, opts, (data) => data.sale);
  }

  /** The answer's `data`, or what `pick` takes of it (and of the whole answer). */
  private async call<S extends z.ZodType<{ data: unknown }>, T = z.output<S>['data']>(
    spec: RequestSpec,
    schema: S,
    opts: CallOptions = {},
    pick: (data: z.output<S>['data'], body: z.output<S>) => T = (data) => data as T,
  ): Promise<ApiResult<T>> {
    const businessId = spec.unscoped
      ? undefined
      : (validateBusinessId(spec.operation, opts.businessId) ?? this.businessId);
    const request: HttpRequest = {
      operation: spec.operation,
      method: spec.method ?? 'GET',
      path: `${API_PREFIX}${spec.path}`,
      query: businessId === undefined ? { ...spec.query } : { ...spec.query, businessId },
      headers: { ...spec.headers, 'x-api-key': this.#apiKey },
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      idempotent: spec.idempotent ?? true,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    };
    const res = await callJson(this.transport, request, schema);
    return { data: pick(res.data.data, res.data), meta: res.meta };
  }
}
