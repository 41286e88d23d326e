import type { z } from 'zod';
import { assertCredential } from '../config/credentials.js';
import { RequestValidationError } from '../http/errors.js';
import { callJson, type ApiResult } from '../http/json-api.js';
import { HttpTransport, type HttpMethod, type HttpTransportOptions, type QueryValue } from '../http/transport.js';
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

export interface AccountingClientOptions extends Pick<
  HttpTransportOptions,
  'baseUrl' | 'insecureHttpHosts' | 'timeoutMs'
> {
  apiKey: string;
  /** Needed to sign requests; never sent. */
  clientSecret?: string;
  /** Sign every request (default: true when a client secret is given). */
  signRequests?: boolean;
  /** Sign path plus query string instead of the bare path (A11; ACCOUNTING_SIGN_QUERY). */
  signQuery?: boolean;
  now?: () => number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface PagingParams {
  /** From 1. */
  page?: number;
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

function checkPaging(operation: string, { page, limit }: PagingParams): void {
  if (page !== undefined && !(Number.isSafeInteger(page) && page >= 1)) {
    throw new RequestValidationError(operation, 'page', 'must be an integer of at least 1');
  }
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_PAGE_LIMIT)) {
    throw new RequestValidationError(operation, 'limit', `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  }
}

function checkOneOf(operation: string, field: string, value: string | undefined, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value)) {
    throw new RequestValidationError(operation, field, `must be one of ${allowed.join(', ')}`);
  }
}

function checkBillPaymentFilters(operation: string, filters: BillPaymentFilters): void {
  checkPaging(operation, filters);
  checkOneOf(operation, 'paymentMethod', filters.paymentMethod, PAYMENT_METHODS);
  checkOneOf(operation, 'status', filters.status, SYNC_STATUSES);
  checkOneOf(operation, 'sortBy', filters.sortBy, SORT_FIELDS);
  checkOneOf(operation, 'sortOrder', filters.sortOrder, SORT_DIRECTIONS);
  for (const field of ['companyId', 'syncBatchId'] as const) {
    if (filters[field]?.trim() === '') throw new RequestValidationError(operation, field, 'must not be empty');
  }
}

const QUERY_NAMES = ['page', 'limit', 'paymentMethod', 'status', 'companyId', 'syncBatchId', 'sortBy', 'sortOrder'];

/** The query of a list call (A5), in one order whatever the order of `params`. */
function toQuery(params: BillPaymentFilters): Record<string, QueryValue> {
  return Object.fromEntries(
    QUERY_NAMES.map((name) => [name, params[name as keyof BillPaymentFilters]]).filter(([, v]) => v !== undefined),
  ) as Record<string, QueryValue>;
}

/** Client of the accounting service: `X-API-Key` on every request, and the HMAC signature when a secret is set. */
export class AccountingClient {
  private readonly transport: HttpTransport;
  private readonly apiKey: string;
  private readonly signingSecret: string | undefined;
  private readonly signQuery: boolean;
  private readonly now: () => number;

  constructor(options: AccountingClientOptions) {
    this.apiKey = assertCredential('accountingApiKey', 'ACCOUNTING_API_KEY', options.apiKey);
    const secret =
      options.clientSecret === undefined
        ? undefined
        : assertCredential('accountingClientSecret', 'ACCOUNTING_CLIENT_SECRET', options.clientSecret);
    if (options.signRequests === true && secret === undefined) {
      throw new Error('Signing accounting requests needs a client secret (ACCOUNTING_CLIENT_SECRET)');
    }
    this.signingSecret = options.signRequests === false ? undefined : secret;
    this.signQuery = options.signQuery ?? false;
    this.now = options.now ?? Date.now;
    const { baseUrl, insecureHttpHosts, timeoutMs } = options;
    this.transport = new HttpTransport({ service: 'accounting', baseUrl, insecureHttpHosts, timeoutMs });
  }

  async listCompanies(params: PagingParams = {}, options: CallOptions = {}): Promise<ApiResult<CompanyPage>> {
    checkPaging('listCompanies', params);
    const query = toQuery({ page: params.page, limit: params.limit });
    return this.call('listCompanies', 'GET', '/companies', query, CompanyPageSchema, options);
  }

  async listBillPayments(
    filters: BillPaymentFilters = {},
    options: CallOptions = {},
  ): Promise<ApiResult<BillPaymentPage>> {
    checkBillPaymentFilters('listBillPayments', filters);
    return this.call('listBillPayments', 'GET', '/bill-payments', toQuery(filters), BillPaymentPageSchema, options);
  }

  /** Every page from `filters.page` (default 1) on. Offset paging: records added while iterating can shift pages. */
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

  async *iterateBillPayments(filters: BillPaymentFilters = {}, options: CallOptions = {}): AsyncGenerator<BillPayment> {
    for await (const page of this.iterateBillPaymentPages(filters, options)) yield* page.data;
  }

  /** Starts processing a sync batch; safe to repeat (A10). */
  async processSyncBatch(syncBatchId: string, options: CallOptions = {}): Promise<ApiResult<ProcessSyncBatchResponse>> {
    const operation = 'processSyncBatch';
    if (syncBatchId.trim() === '') throw new RequestValidationError(operation, 'syncBatchId', 'must not be empty');
    const path = `/sync/batches/${encodeURIComponent(syncBatchId)}/process`;
    return this.call(operation, 'POST', path, undefined, ProcessSyncBatchResponseSchema, options);
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  /** Sends one bodiless call; every call of this service is safe to repeat. */
  private call<S extends z.ZodType>(
    operation: string,
    method: HttpMethod,
    path: string,
    query: Record<string, QueryValue> | undefined,
    schema: S,
    { signal }: CallOptions,
  ): Promise<ApiResult<z.output<S>>> {
    const headers: Record<string, string> = { 'X-API-Key': this.apiKey };
    if (this.signingSecret !== undefined) {
      const { signingSecret: clientSecret, signQuery, now } = this;
      const target = this.transport.target(path, query);
      Object.assign(headers, signatureHeaders({ method, target, clientSecret, signQuery, now }));
    }
    return callJson(this.transport, { operation, method, path, query, headers, idempotent: true, signal }, schema);
  }
}
