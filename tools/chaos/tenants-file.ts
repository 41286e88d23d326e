/**
 * The tenants file the chaos fleet serves (docs/tenancy.md): one compliance entry per application of the world,
 * each with its budget, pointing at the run's sandbox; one accounting entry; the businesses taking stock in
 * (docs/stock-in.md). Keys are named by environment variable, never written to the file (a failed run keeps its
 * directory), and given to the workers in their environment.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChaosApplication } from './world.js';

const ACCOUNTING_KEY_VARIABLE = 'CHAOS_BOOKS_ACCOUNTING_KEY';
const ACCOUNTING_SECRET_VARIABLE = 'CHAOS_BOOKS_ACCOUNTING_CLIENT_SECRET';

export interface TenantsFileContent {
  compliance: Array<{
    application: string;
    apiKey: { env: string };
    baseUrl: string;
    requestsPerMinute: number;
    businesses?: string[];
  }>;
  accounting: Array<{ application: string; apiKey: { env: string }; clientSecret: { env: string }; baseUrl: string }>;
  links: never[];
  stockIn: Array<{ business: string; from: string; allOrNothing: boolean }>;
}

export function tenantsFileContent(options: {
  applications: readonly ChaosApplication[];
  complianceUrl: string;
  accountingUrl: string;
  /** Per business taking stock in, the date it takes it from. */
  stockIn?: Readonly<Record<string, string>>;
}): TenantsFileContent {
  return {
    compliance: options.applications.map((a) => ({
      application: a.name,
      apiKey: { env: a.keyVariable },
      baseUrl: options.complianceUrl,
      requestsPerMinute: a.requestsPerMinute,
      ...(a.listedBusinesses ? { businesses: a.listedBusinesses } : {}),
    })),
    accounting: [
      {
        application: 'books',
        apiKey: { env: ACCOUNTING_KEY_VARIABLE },
        clientSecret: { env: ACCOUNTING_SECRET_VARIABLE },
        baseUrl: options.accountingUrl,
      },
    ],
    // Reconciliation is not what this run is about.
    links: [],
    // Every line of the run's invoices names an item: nothing waits for a person, so all-or-nothing changes nothing.
    stockIn: Object.entries(options.stockIn ?? {}).map(([business, from]) => ({ business, from, allOrNothing: false })),
  };
}

/** The variables the file names, with their values: for the workers' environment only. */
export function tenantKeysEnv(
  applications: readonly ChaosApplication[],
  accounting: { apiKey: string; clientSecret: string },
): Record<string, string> {
  return {
    ...Object.fromEntries(applications.map((a) => [a.keyVariable, a.key])),
    [ACCOUNTING_KEY_VARIABLE]: accounting.apiKey,
    [ACCOUNTING_SECRET_VARIABLE]: accounting.clientSecret,
  };
}

/** Writes `tenants.json` into `dir`; returns its path. */
export async function writeTenantsFile(dir: string, content: TenantsFileContent): Promise<string> {
  const file = path.join(dir, 'tenants.json');
  await writeFile(file, `${JSON.stringify(content, null, 2)}\n`);
  return file;
}
