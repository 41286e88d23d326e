import { badRequest } from './errors.js';
import { PAYMENT_METHOD_VALUES, SYNC_STATUS_VALUES, type PaymentMethod, type SyncStatus } from './fixture.js';

/** Query names and defaults of the list endpoints (contract decision A5). */
const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;
const SORT_FIELD_VALUES = ['paymentDate', 'totalAmount', 'createdAt', 'updatedAt'] as const;
const SORT_ORDER_VALUES = ['asc', 'desc'] as const;

export type SortField = (typeof SORT_FIELD_VALUES)[number];
type SortOrder = (typeof SORT_ORDER_VALUES)[number];

export interface Paging {
  page: number;
  limit: number;
}

export interface BillPaymentQuery extends Paging {
  paymentMethod?: PaymentMethod;
  status?: SyncStatus;
  companyId?: string;
  /** A18: the bill payments of one sync batch. */
  syncBatchId?: string;
  sortBy: SortField;
  sortOrder: SortOrder;
}

type RawQuery = Record<string, unknown>;

function single(query: RawQuery, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`Query parameter ${name} must be given once`);
  return value;
}

function integer(query: RawQuery, name: string, fallback: number, min: number, max: number): number {
  const raw = single(query, name);
  if (raw === undefined) return fallback;
  const value = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw badRequest(`Query parameter ${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function oneOf<T extends string>(query: RawQuery, name: string, allowed: readonly T[]): T | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw badRequest(`Query parameter ${name} must be one of ${allowed.join(', ')}`);
  }
  return raw as T;
}

export function parsePaging(query: RawQuery): Paging {
  return {
    page: integer(query, 'page', 1, 1, 1_000_000),
    limit: integer(query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT),
  };
}

export function parseBillPaymentQuery(query: RawQuery): BillPaymentQuery {
  const companyId = single(query, 'companyId');
  if (companyId === '') throw badRequest('Query parameter companyId must not be empty');
  const syncBatchId = single(query, 'syncBatchId');
  if (syncBatchId === '') throw badRequest('Query parameter syncBatchId must not be empty');
  const paymentMethod = oneOf(query, 'paymentMethod', PAYMENT_METHOD_VALUES);
  const status = oneOf(query, 'status', SYNC_STATUS_VALUES);
  return {
    ...parsePaging(query),
    ...(paymentMethod ? { paymentMethod } : {}),
    ...(status ? { status } : {}),
    ...(companyId ? { companyId } : {}),
    ...(syncBatchId ? { syncBatchId } : {}),
    sortBy: oneOf(query, 'sortBy', SORT_FIELD_VALUES) ?? 'createdAt',
    sortOrder: oneOf(query, 'sortOrder', SORT_ORDER_VALUES) ?? 'desc',
  };
}

export interface ListEnvelope<T> {
  data: T[];
  total: number;
  page: number;
  limit: number;
  totalPages: number;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/** One page of `items` with the envelope's arithmetic; a page past the end is empty, not an error. */
export function paginate<T>(items: readonly T[], { page, limit }: Paging): ListEnvelope<T> {
  const total = items.length;
  const totalPages = Math.ceil(total / limit);
  return {
    data: items.slice((page - 1) * limit, page * limit),
    total,
    page,
    limit,
    totalPages,
    hasNextPage: page < totalPages,
    hasPreviousPage: page > 1,
  };
}
