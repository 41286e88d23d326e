/**
 * The tenancy section's world: many merchants, each with its own compliance application (its own budget) and one
 * organisation-wide key, half of them with one business and half with several, as a sandbox fixture; and the tenants file a vendor's fleet would serve
 * them from. Keys are made for the run (random `cmp_sk_test_` keys): they live only in the bench's sandbox and in a
 * temporary tenants file, never in a report or a log line.
 */
import { randomBytes } from 'node:crypto';
import { SCOPE_VALUES, type ComplianceFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import type { SaleInput } from '../../src/contracts/sale.js';

export interface TenancyMerchant {
  /** Its name in the tenants file (what logs, metrics and the report show). */
  application: string;
  /** The sandbox's id of its application. */
  applicationId: string;
  /** Its organisation-wide key (a secret: never printed). */
  key: string;
  /** Its limit, in the sandbox and in the tenants file alike: requests per rate window. */
  requestsPerWindow: number;
  businesses: readonly string[];
}

export interface TenancyWorld {
  /** Served from the start, in the tenants file's order. */
  merchants: readonly TenancyMerchant[];
  /** Known to the sandbox from the start (its application and key exist), added to the tenants file later. */
  newcomer: TenancyMerchant;
  fixture: ComplianceFixtureInput;
  windowMs: number;
}

/** The one item every business sells: a registered service, not stock-tracked, so a sale is one request (L = 0). */
export const itemOf = (businessId: string) => `itm_${businessId.replace(/^biz_/, '')}`;

/**
 * How many businesses each application has, in the file's order: every other one a single business (a merchant's own
 * key), the others (organisation-wide keys of retail groups) sharing the rest evenly, at least two each. Both kinds
 * are served differently (a window of several businesses shares its budget among them), so both are in the run:
 * the first application has one business, the second several.
 */
export function businessCounts(businesses: number, applications: number): number[] {
  const singles = Math.ceil(applications / 2);
  const groups = applications - singles;
  if (groups === 0 || businesses - singles < 2 * groups)
    throw new RangeError(
      `cannot give ${applications} applications ${businesses} businesses with every other one a group of at least two`,
    );
  const shared = spread(businesses - singles, groups);
  return Array.from({ length: applications }, (_, i) => (i % 2 === 0 ? 1 : shared[(i - 1) / 2]!));
}

/** `total` things over `over` holders as evenly as they go, the first ones taking the remainder. */
export function spread(total: number, over: number): number[] {
  if (!Number.isInteger(total) || !Number.isInteger(over) || over < 1 || total < over)
    throw new RangeError(`cannot spread ${total} over ${over} (each needs at least one)`);
  const base = Math.floor(total / over);
  return Array.from({ length: over }, (_, i) => base + (i < total % over ? 1 : 0));
}

const name = (index: number) => `m${String(index + 1).padStart(4, '0')}`;
const randomKey = () => `cmp_sk_test_bench_${randomBytes(18).toString('base64url')}`;

function merchant(index: number, businesses: number, requestsPerWindow: number): TenancyMerchant {
  const application = name(index);
  return {
    application,
    applicationId: `app_bench_${application}`,
    key: randomKey(),
    requestsPerWindow,
    businesses: Array.from({ length: businesses }, (_, b) => `biz_${application}_${b + 1}`),
  };
}

/** A KRA-PIN-shaped, distinct PIN per business of the run. */
const pinOf = (index: number) =>
  `P${String(100_000_000 + index).padStart(9, '0')}${String.fromCharCode(65 + (index % 26))}`;

function fixtureOf(merchants: readonly TenancyMerchant[], windowMs: number): ComplianceFixtureInput {
  let businessIndex = 0;
  return {
    rateLimitWindowMs: windowMs,
    applications: merchants.map((m) => ({
      id: m.applicationId,
      name: `Bench merchant ${m.application}`,
      requestsPerMinute: m.requestsPerWindow,
    })),
    apiKeys: merchants.map((m) => ({
      id: `key_${m.applicationId}`,
      key: m.key,
      applicationId: m.applicationId,
      scopes: [...SCOPE_VALUES],
    })),
    businesses: merchants.flatMap((m) =>
      m.businesses.map((id) => ({
        id,
        name: `Bench duka ${id}`,
        pin: pinOf(businessIndex++),
        environment: 'sandbox' as const,
        applicationId: m.applicationId,
        branches: [{ id: `br_${id.replace(/^biz_/, '')}`, name: 'Main', authorityBhfId: '00' }],
        items: [
          {
            id: itemOf(id),
            externalId: 'SKU-SERVICE',
            name: 'Delivery service',
            taxTypeCode: 'B' as const,
            unitPrice: 500,
            productTypeCode: '3',
            classificationCode: '8414160000',
            stockTracked: false,
            registrationStatus: 'REGISTERED' as const,
          },
        ],
      })),
    ),
    callbacks: { retryScheduleMs: [0, 200, 500], timeoutMs: 1_000 },
  };
}

/**
 * `applications` merchants served from the start with `businesses` businesses between them (at least one each), and
 * one newcomer with one business, every application limited to `requestsPerWindow` per `windowMs`.
 */
export function tenancyWorld(options: {
  applications: number;
  businesses: number;
  requestsPerWindow: number;
  windowMs: number;
}): TenancyWorld {
  const merchants = businessCounts(options.businesses, options.applications).map((count, i) =>
    merchant(i, count, options.requestsPerWindow),
  );
  const newcomer = merchant(options.applications, 1, options.requestsPerWindow);
  return {
    merchants,
    newcomer,
    fixture: fixtureOf([...merchants, newcomer], options.windowMs),
    windowMs: options.windowMs,
  };
}

/** The tenants file naming `merchants` (each its key inline, its budget per minute and its businesses listed). */
export function tenantsFileContent(
  merchants: readonly TenancyMerchant[],
  complianceUrl: string,
  windowMs: number,
): { compliance: unknown[] } {
  return {
    compliance: merchants.map((m) => ({
      application: m.application,
      apiKey: { value: m.key },
      baseUrl: complianceUrl,
      requestsPerMinute: Math.round((m.requestsPerWindow * 60_000) / windowMs),
      businesses: m.businesses,
    })),
  };
}

/** A sale of the business's one item that closes once signed (no stock line, no refund window). */
export function tenancySale(businessId: string, traderInvoiceNumber: string): SaleInput {
  return {
    businessId,
    traderInvoiceNumber,
    saleDate: '2026-11-21',
    lines: [{ itemId: itemOf(businessId), quantity: 1, unitPrice: 500 }],
    options: { refundWindowDays: 0 },
  };
}
