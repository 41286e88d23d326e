import type { z } from 'zod';
import { assertCredential } from '../config/credentials.js';
import { RequestValidationError } from '../http/errors.js';
import { callJson, type ApiResult } from '../http/json-api.js';
import { HttpTransport, type HttpMethod, type QueryValue } from '../http/transport.js';
import {
  BillPaymentPageSchema,
  CompanyPageSchema,
  PAYMENT_METHODS,
  ProcessSyncBatchResponseSchema,
  SORT_DIRECTIONS,
  SORT_FIELDS,
  SYNC_STATUSES,
  type BillPayment,
  type BillPaymentPage,
  type CompanyPage,
  type KnownPaymentMethod,
  type KnownSyncStatus,
  type ProcessSyncBatchResponse,
  type SortDirection,
  type SortField,
} from './schemas.js';
import { signatureHeaders } from './signing.js';

export interface AccountingClientOptions {
  baseUrl: string;
  /** Hosts reached in plain http although not loopback (ALLOW_INSECURE_HTTP): private networks only. */
  insecureHttpHosts?: readonly string[];
  apiKey: string;
  /** Needed to sign requests; never sent. */
  clientSecret?: string;
  /** Sign every request (default: true when a client secret is given). */
  signRequests?: boolean;
  /** Sign path plus query string instead of the bare path (A11; ACCOUNTING_SIGN_QUERY). */
  signQuery?: boolean;
  timeoutMs?: number;
  /** Clock for X-Timestamp, in epoch milliseconds. */
  now?: () => number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface PagingParams {
  /** 1-based page number. */
  page?: number;
  /** Page size, 1..100. */
  limit?: number;
}

export interface BillPaymentFilters extends PagingParams {
  paymentMethod?: KnownPaymentMethod;
  status?: KnownSyncStatus;
  companyId?: string;
  /** A18: the bill payments of one sync batch (a service that ignores it returns more; check `syncBatchId`). */
  syncBatchId?: string;
  sortBy?: SortField;
  sortOrder?: SortDirection;
}

const MAX_PAGE_LIMIT = 100;

/** The service's paths and query names (A5), in one place. */
const PATHS = {
  companies: '/companies',
  billPayments: '/bill-payments',
  processSyncBatch: (syncBatchId: string) => `/sync/batches/${encodeURIComponent(syncBatchId)}/process`,
} as const;

const QUERY_NAMES = {
  page: 'page',
  limit: 'limit',
  paymentMethod: 'paymentMethod',
  status: 'status',
  companyId: 'companyId',
  syncBatchId: 'syncBatchId',
  sortBy: 'sortBy',
  sortOrder: 'sortOrder',
} as const satisfies Record<keyof BillPaymentFilters, string>;

function checkPaging(operation: string, params: PagingParams): void {
  const { page, limit } = params;
  if (page !== undefined && !(Number.isSafeInteger(page) && page >= 1)) {
    throw new RequestValidationError(operation, QUERY_NAMES.page, 'must be an integer of at least 1');
  }
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_PAGE_LIMIT)) {
    throw new RequestValidationError(operation, QUERY_NAMES.limit, `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  }
}

function checkOneOf(operation: string, field: string, value: string | undefined, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value)) {
    throw new RequestValidationError(operation, field, `must be one of ${allowed.join(', ')}`);
  }
}

function checkBillPaymentFilters(operation: string, filters: BillPaymentFilters): void {
  checkPaging(operation, filters);
  checkOneOf(operation, QUERY_NAMES.paymentMethod, filters.paymentMethod, PAYMENT_METHODS);
  checkOneOf(operation, QUERY_NAMES.status, filters.status, SYNC_STATUSES);
  checkOneOf(operation, QUERY_NAMES.sortBy, filters.sortBy, SORT_FIELDS);
  checkOneOf(operation, QUERY_NAMES.sortOrder, filters.sortOrder, SORT_DIRECTIONS);
  for (const name of ['companyId', 'syncBatchId'] as const) {
    if (filters[name] !== undefined && filters[name].trim() === '') {
      throw new RequestValidationError(operation, QUERY_NAMES[name], 'must not be empty');
    }
  }
}

function toQuery(params: Partial<Record<keyof typeof QUERY_NAMES, QueryValue>>): Record<string, QueryValue> {
  const query: Record<string, QueryValue> = {};
  for (const [key, name] of Object.entries(QUERY_NAMES) as Array<[keyof typeof QUERY_NAMES, string]>) {
    if (params[key] !== undefined) query[name] = params[key];
  }
  return query;
}

interface Call<S extends z.ZodType> {
  operation: string;
  method: HttpMethod;
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  idempotent: boolean;
  schema: S;
  signal?: AbortSignal;
}

/**
 * Client of the accounting service: `X-API-Key` on every request and, when a client secret is
 * configured, the HMAC signature computed per call over exactly the bytes sent.
 */
export class AccountingClient {
  private readonly transport: HttpTransport;
  private readonly apiKey: string;
  private readonly clientSecret: string | undefined;
  private readonly signRequests: boolean;
  private readonly signQuery: boolean;
  private readonly now: () => number;

  constructor(options: AccountingClientOptions) {
    this.apiKey = assertCredential('accountingApiKey', 'ACCOUNTING_API_KEY', options.apiKey);
    this.clientSecret =
      options.clientSecret === undefined
        ? undefined
        : assertCredential('accountingClientSecret', 'ACCOUNTING_CLIENT_SECRET', options.clientSecret);
    this.signRequests = options.signRequests ?? this.clientSecret !== undefined;
    if (this.signRequests && this.clientSecret === undefined) {
      throw new Error('Signing accounting requests needs a client secret (ACCOUNTING_CLIENT_SECRET)');
    }
    this.signQuery = options.signQuery ?? false;
    this.now = options.now ?? Date.now;
    this.transport = new HttpTransport({
      service: 'accounting',
      baseUrl: options.baseUrl,
      insecureHttpHosts: options.insecureHttpHosts,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
  }

  /** The companies the key's application may act for (A8). */
  async listCompanies(params: PagingParams = {}, options: CallOptions = {}): Promise<ApiResult<CompanyPage>> {
    checkPaging('listCompanies', params);
    return this.read(
      'listCompanies',
      PATHS.companies,
      toQuery({ page: params.page, limit: params.limit }),
      CompanyPageSchema,
      options,
    );
  }

  /** One page of bill payments; filters are checked before anything is sent. */
  async listBillPayments(
    filters: BillPaymentFilters = {},
    options: CallOptions = {},
  ): Promise<ApiResult<BillPaymentPage>> {
    checkBillPaymentFilters('listBillPayments', filters);
    return this.read('listBillPayments', PATHS.billPayments, toQuery(filters), BillPaymentPageSchema, options);
  }

  /**
   * Every page from `filters.page` (default 1) until the service says there is no next page. Offset
   * paging: records added or re-sorted while iterating can shift between pages.
   */
  async *iterateBillPaymentPages(
    filters: BillPaymentFilters = {},
    options: CallOptions = {},
  ): AsyncGenerator<BillPaymentPage> {
    let page = filters.page ?? 1;
    for (;;) {
      const { data } = await this.listBillPayments({ ...filters, page }, options);
      yield data;
      // An empty page that claims a successor would loop forever; stop there.
      if (!data.hasNextPage || data.data.length === 0) return;
      page += 1;
    }
  }

  /** Every bill payment matching `filters`, page after page. */
  async *iterateBillPayments(filters: BillPaymentFilters = {}, options: CallOptions = {}): AsyncGenerator<BillPayment> {
    for await (const page of this.iterateBillPaymentPages(filters, options)) yield* page.data;
  }

  /** Starts processing a sync batch; safe to repeat (A10), so it counts as idempotent. */
  async processSyncBatch(syncBatchId: string, options: CallOptions = {}): Promise<ApiResult<ProcessSyncBatchResponse>> {
    const operation = 'processSyncBatch';
    if (syncBatchId.trim() === '') throw new RequestValidationError(operation, 'syncBatchId', 'must not be empty');
    return this.call({
      operation,
      method: 'POST',
      path: PATHS.processSyncBatch(syncBatchId),
      idempotent: true,
      schema: ProcessSyncBatchResponseSchema,
      ...options,
    });
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  /** A GET: a read, so safe to repeat. */
  private read<S extends z.ZodType>(
    operation: string,
    path: string,
    query: Record<string, QueryValue>,
    schema: S,
    options: CallOptions,
  ): Promise<ApiResult<z.output<S>>> {
    return this.call({ operation, method: 'GET', path, query, idempotent: true, schema, ...options });
  }

  private call<S extends z.ZodType>(call: Call<S>): Promise<ApiResult<z.output<S>>> {
    // Serialised once: the signature must cover exactly the bytes that go on the wire.
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const headers: Record<string, string> = { 'X-API-Key': this.apiKey };
    if (this.signRequests && this.clientSecret !== undefined) {
      Object.assign(
        headers,
        signatureHeaders({
          method: call.method,
          target: this.transport.target(call.path, call.query),
          ...(body === undefined ? {} : { body }),
          clientSecret: this.clientSecret,
          signQuery: this.signQuery,
          now: this.now,
        }),
      );
    }
    return callJson(
      this.transport,
      {
        operation: call.operation,
        method: call.method,
        path: call.path,
        ...(call.query ? { query: call.query } : {}),
        ...(body === undefined ? {} : { body }),
        headers,
        idempotent: call.idempotent,
        ...(call.signal ? { signal: call.signal } : {}),
      },
      call.schema,
    );
  }
}
