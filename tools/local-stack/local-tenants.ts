/**
 * The local stack's two merchants, each on its own compliance application and key and its own books, as a tenants
 * file names them: what `npm start` and `npm run demo` serve by default. The sandbox's default world has them:
 *
 * - `demo-retail`: application app_demo_retail, its organisation-wide key, the Nairobi and Mombasa businesses
 *   (120 requests a minute); its books `demo-books` (accounting application app_demo);
 * - `other-integrator`: application app_demo_other, its own key, the Kisumu business (60 a minute); its books
 *   `other-books` (accounting application app_other).
 *
 * The Nairobi business takes its confirmed supplier invoices in as stock (`stockIn`, docs/stock-in.md), from a day
 * before every invoice of the sandbox's world, so the demo's confirmation adds stock rather than opening it.
 *
 * The keys are the sandbox's published test keys, inline in a file only the stack's user can read, in a directory of
 * its own that the stack removes when it stops; they are never logged. Each accounting application signs its
 * webhooks with its own secret: the default world gives app_other none, so this world gives it one of its own for
 * the run (random, never logged), and each application's webhooks are pointed at its own path of the receiver.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  defaultAccountingFixture,
  DEMO_RECONCILIATION_LINK,
  OTHER_COMPANY_ID,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import type { SandboxFixtureInput } from '../../sandbox/fixture.js';
import type { Sandbox } from '../../sandbox/server.js';

/** One merchant of the local stack: its compliance application and its books. */
export interface LocalMerchant {
  /** The tenant entry's name (what logs, errors and the demo show). */
  application: string;
  /** The compliance service's id of the application its key belongs to. */
  serviceApplicationId: string;
  key: string;
  businesses: readonly string[];
  requestsPerMinute: number;
  /** Its accounting application: the tenant entry's name and the service's id. */
  books: { application: string; serviceApplicationId: string };
  /** Its business reconciled with its accounting company. */
  link: { businessId: string; companyId: string };
}

export const LOCAL_MERCHANTS = {
  retail: {
    application: 'demo-retail',
    serviceApplicationId: DEMO.applications.retail,
    key: DEMO.keys.orgWide,
    businesses: [DEMO.businesses.nairobi, DEMO.businesses.mombasa],
    requestsPerMinute: 120,
    books: { application: 'demo-books', serviceApplicationId: 'app_demo' },
    link: DEMO_RECONCILIATION_LINK,
  },
  other: {
    application: 'other-integrator',
    serviceApplicationId: DEMO.applications.other,
    key: DEMO.keys.otherApplication,
    businesses: [DEMO.businesses.kisumu],
    requestsPerMinute: 60,
    books: { application: 'other-books', serviceApplicationId: 'app_other' },
    link: { businessId: DEMO.businesses.kisumu, companyId: OTHER_COMPANY_ID },
  },
} as const satisfies Record<string, LocalMerchant>;

const MERCHANTS: readonly LocalMerchant[] = Object.values(LOCAL_MERCHANTS);

/** The businesses that take stock in, as the tenants file's `stockIn` list names them. */
export const LOCAL_STOCK_IN = [{ business: DEMO.businesses.nairobi, from: '2025-01-01', allOrNothing: false }] as const;

/** A `whsec_` secret for this run only. */
function runWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The sandbox's default world, every merchant's books signing their webhooks with a secret of their own. */
export function localSandboxFixture(): SandboxFixtureInput {
  const books = new Set(MERCHANTS.map((merchant) => merchant.books.serviceApplicationId));
  return {
    accounting: {
      ...defaultAccountingFixture,
      applications: defaultAccountingFixture.applications.map((application) =>
        books.has(application.id) && application.webhookSecret === undefined
          ? { ...application, webhookSecret: runWebhookSecret() }
          : application,
      ),
    },
  };
}

/** The tenants file of the two merchants on this sandbox, written into `dir` (readable by this user only); its path. */
export function writeLocalTenantsFile(sandbox: Sandbox, dir: string): string {
  const accountingOf = (id: string) => {
    const application = sandbox.fixture.accounting.applications.find((a) => a.id === id);
    if (!application) throw new Error(`the sandbox has no accounting application ${id}`);
    return application;
  };
  const document = {
    compliance: MERCHANTS.map((merchant) => ({
      application: merchant.application,
      apiKey: { value: merchant.key },
      baseUrl: sandbox.complianceUrl,
      requestsPerMinute: merchant.requestsPerMinute,
      businesses: merchant.businesses,
    })),
    accounting: MERCHANTS.map(({ books }) => {
      const application = accountingOf(books.serviceApplicationId);
      const clientSecret = application.clientSecrets[0];
      return {
        application: books.application,
        apiKey: { value: application.apiKeys[0]! },
        baseUrl: sandbox.accountingUrl,
        clientId: { value: application.clientId },
        ...(clientSecret ? { clientSecret: { value: clientSecret } } : {}),
        ...(application.webhookSecret ? { webhookSecret: { value: application.webhookSecret } } : {}),
      };
    }),
    links: MERCHANTS.map((merchant) => ({
      business: merchant.link.businessId,
      company: merchant.link.companyId,
      accounting: merchant.books.application,
    })),
    stockIn: LOCAL_STOCK_IN,
  };
  const path = join(dir, 'tenants.json');
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return path;
}

/** Points each merchant's books' webhooks at its own path of the receiver, as each dashboard setting would. */
export async function pointWebhooks(
  sandbox: Sandbox,
  receiverUrl: string,
  pathOf: (application: string) => string,
): Promise<string[]> {
  const pointed: string[] = [];
  for (const { books } of MERCHANTS) {
    if (!sandbox.fixture.accounting.applications.find((a) => a.id === books.serviceApplicationId)?.webhookSecret)
      continue;
    await sandbox.inspector.setAccountingWebhookEndpoint(
      books.serviceApplicationId,
      `${receiverUrl}${pathOf(books.application)}`,
    );
    pointed.push(books.application);
  }
  return pointed;
}
