import { z } from 'zod';
import { assertCredential } from '../config/credentials.js';
import { validatePathId, validateRequest } from '../compliance/requests.js';
import { nonEmpty } from '../contracts/sale-input.js';
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
} from './schemas.js';
import { signatureHeaders } from './signing.js';

export type AccountingClientOptions = Pick<HttpTransportOptions, 'baseUrl' | 'insecureHttpHosts' | 'timeoutMs'> & {
  apiKey: string;
  /** Needed to sign requests; never sent. */
  clientSecret?: string;
  /** Sign every request (default: true when a client secret is given). */
  signRequests?: boolean;
  /** Sign path plus query string instead of the bare path (A11; ACCOUNTING_SIGN_QUERY). */
  signQuery?: boolean;
  now?: () => number;
};

export interface CallOptions {
  signal?: AbortSignal;
}

const MAX_PAGE_LIMIT = 100;

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, `must be one of ${values.join(', ')}`).optional();

const whole = (message: string, max: number) =>
  z.number({ error: message }).int(message).min(1, message).max(max, message).optional();

const paging = z.object({
  page: whole('must be an integer of at least 1', Number.MAX_SAFE_INTEGER),
  limit: whole(`must be an integer from 1 to ${MAX_PAGE_LIMIT}`, MAX_PAGE_LIMIT),
});

/** In the order of the query of a list call (A5), whatever the order of the caller's fields. */
const billPaymentFilters = paging.extend({
  paymentMethod: oneOf(PAYMENT_METHODS),
  status: oneOf(SYNC_STATUSES),
  companyId: nonEmpty().optional(),
  /** A18: the bill payments of one sync batch (a service that ignores it returns more; check `syncBatchId`). */
  syncBatchId: nonEmpty().optional(),
  sortBy: oneOf(SORT_FIELDS),
  sortOrder: oneOf(SORT_DIRECTIONS),
});

export type BillPaymentFilters = z.input<typeof billPaymentFilters>;

/** Client of the accounting service: `X-API-Key` on every request, and the HMAC signature when a secret is set. */
export class AccountingClient {
  private readonly transport: HttpTransport;
  private readonly apiKey: string;
  /** The signature headers of one request; absent when requests are not signed. */
  private readonly sign?: (method: HttpMethod, target: string) => Record<string, string>;

  constructor(options: AccountingClientOptions) {
    this.apiKey = assertCredential('accountingApiKey', 'ACCOUNTING_API_KEY', options.apiKey);
    const secret =
      options.clientSecret === undefined
        ? undefined
        : assertCredential('accountingClientSecret', 'ACCOUNTING_CLIENT_SECRET', options.clientSecret);
    if (options.signRequests === true && secret === undefined) {
      throw new Error('Signing accounting requests needs a client secret (ACCOUNTING_CLIENT_SECRET)');
    }
    if (secret !== undefined && options.signRequests !== false) {
      const { signQuery = false, now = Date.now } = options;
      this.sign = (method, target) => signatureHeaders({ method, target, clientSecret: secret, signQuery, now });
    }
    const { baseUrl, insecureHttpHosts, timeoutMs } = options;
    this.transport = new HttpTransport({ service: 'accounting', baseUrl, insecureHttpHosts, timeoutMs });
  }

  async listCompanies(params: z.input<typeof paging> = {}, options: CallOptions = {}) {
    const query = validateRequest('listCompanies', paging, params);
    return this.call('listCompanies', 'GET', '/companies', query, CompanyPageSchema, options);
  }

  async listBillPayments(filters: BillPaymentFilters = {}, options: CallOptions = {}) {
    const query = validateRequest('listBillPayments', billPaymentFilters, filters);
    return this.call('listBillPayments', 'GET', '/bill-payments', query, BillPaymentPageSchema, options);
  }

  /** Every page from `filters.page` (default 1) on. Offset paging: records added while iterating can shift pages. */
  async *iterateBillPaymentPages(filters: BillPaymentFilters = {}, options: CallOptions = {}) {
    for (let page = filters.page ?? 1; ; page++) {
      const { data } = await this.listBillPayments({ ...filters, page }, options);
      yield data;
      // An empty page that claims a successor would loop forever; stop there.
      if (!data.hasNextPage || data.data.length === 0) return;
    }
  }

  async *iterateBillPayments(filters: BillPaymentFilters = {}, options: CallOptions = {}) {
    for await (const page of this.iterateBillPaymentPages(filters, options)) yield* page.data;
  }

  /** Starts processing a sync batch; safe to repeat (A10). */
  async processSyncBatch(syncBatchId: string, options: CallOptions = {}) {
    const id = validatePathId('processSyncBatch', 'syncBatchId', syncBatchId);
    const path = `/sync/batches/${encodeURIComponent(id)}/process`;
    return this.call('processSyncBatch', 'POST', path, undefined, ProcessSyncBatchResponseSchema, options);
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
    const headers = { 'X-API-Key': this.apiKey, ...this.sign?.(method, this.transport.target(path, query)) };
    return callJson(this.transport, { operation, method, path, query, headers, idempotent: true, signal }, schema);
  }
}
