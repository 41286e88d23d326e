/**
 * ServiceAccess over many applications, against the sandbox over real HTTP: each business's calls go with its
 * application's key, each company's with its accounting application's, and a business no entry serves fails
 * clearly at call time.
 */
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComplianceTenant } from '../../src/tenants/types.js';
import { ApiError } from '../../src/http/errors.js';
import { RATE_BUDGET_SPENT } from '../../src/http/transport.js';
import { openLiveTenants } from '../../src/tenants/live.js';
import { openTenantAccess, UnknownBusinessError, UnknownCompanyError } from '../../src/tenants/access.js';
import { DEMO_ACCOUNTING_API_KEY, OTHER_COMPANY_ID } from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { sandboxTenants } from '../helpers/tenants.js';

const B = DEMO.businesses;
const K = DEMO.keys;

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});

afterAll(async () => {
  await sandbox?.close();
});

function compliance(
  application: string,
  apiKey: string,
  businesses?: string[],
  on: Sandbox = sandbox,
): ComplianceTenant {
  return {
    application,
    service: {
      baseUrl: on.complianceUrl,
      apiKey,
      businessId: undefined,
      timeoutMs: 5_000,
      allowLoopbackCallbacks: true,
    },
    requestsPerMinute: 120,
    businesses,
    source: `tenants.json: compliance (${application})`,
  };
}

const { accounting, link, tenants, otherAccountingKey } = sandboxTenants(() => sandbox);

/** The application the sandbox counted the latest request of `service` against. */
async function lastApplication(service: 'compliance' | 'accounting'): Promise<string | undefined> {
  return (await sandbox.inspector.requestLog({ service })).at(-1)?.applicationId;
}

describe('openTenantAccess', () => {
  it('sends each business’s calls with the key of the application that serves it', async () => {
    const config = tenants({
      compliance: [
        compliance('group', K.orgWide, [B.mombasa]),
        compliance('nairobi-till', K.nairobi),
        compliance('other', K.otherApplication),
      ],
    });
    const access = openTenantAccess(await openLiveTenants(config));
    try {
      await access.compliance(B.kisumu).listItems({ businessId: B.kisumu });
      expect(await lastApplication('compliance')).toBe(DEMO.applications.other);
      await access.compliance(B.mombasa).listItems({ businessId: B.mombasa });
      expect(await lastApplication('compliance')).toBe(DEMO.applications.retail);

      // Two entries of one service application: the key itself tells them apart.
      expect((await access.compliance(B.nairobi).getIdentity()).data.apiKey?.id).toBe('key_demo_nairobi');
      expect((await access.compliance(B.mombasa).getIdentity()).data.apiKey?.id).toBe('key_demo_org_wide');
      // A business-bound key accepts its own business named in the call, as activities name it.
      const { data: items } = await access.compliance(B.nairobi).listItems({ businessId: B.nairobi });
      expect(items.map((i) => i.id)).toContain(DEMO.items.milk);

      expect(access.compliance(B.nairobi)).toBe(access.compliance(B.nairobi));
    } finally {
      await access.close();
    }
  });

  it('fails a call for a business no application serves: typed, named, not retryable', async () => {
    const access = openTenantAccess(
      await openLiveTenants(tenants({ compliance: [compliance('other', K.otherApplication)] })),
    );
    try {
      let thrown: unknown;
      try {
        access.compliance(B.nairobi);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(UnknownBusinessError);
      // Thrown from an activity, Temporal keeps it as is: the workflow sees its type, and no retry follows.
      expect(thrown).toBeInstanceOf(ApplicationFailure);
      const failure = thrown as UnknownBusinessError;
      expect(failure.code).toBe('business_not_served');
      expect(failure.type).toBe('business_not_served');
      expect(failure.nonRetryable).toBe(true);
      expect(failure.businessId).toBe(B.nairobi);
      expect(failure.message).toBe(`business ${B.nairobi} is served by no compliance application of tenants.json`);
    } finally {
      await access.close();
    }
  });

  describe('accounting', () => {
    it('sends each company’s calls with its accounting application’s key', async () => {
      const config = tenants({
        compliance: [compliance('retail', K.orgWide), compliance('other', K.otherApplication)],
        accounting: [accounting('books', DEMO_ACCOUNTING_API_KEY), accounting('other-books', otherAccountingKey())],
        links: [link(B.nairobi, 'cmp_demo_nairobi', 'books'), link(B.kisumu, OTHER_COMPANY_ID, 'other-books')],
      });
      const access = openTenantAccess(await openLiveTenants(config));
      try {
        await access.accounting(OTHER_COMPANY_ID).listCompanies({ limit: 1 });
        expect(await lastApplication('accounting')).toBe('app_other');
        await access.accounting('cmp_demo_nairobi').listCompanies({ limit: 1 });
        expect(await lastApplication('accounting')).toBe('app_demo');

        // With two, a call must say whose company it is.
        expect(() => access.accounting()).toThrow(UnknownCompanyError);
        expect(() => access.accounting()).toThrow(
          'the call names no company, and 2 accounting applications are configured (books, other-books)',
        );
        let thrown: unknown;
        try {
          access.accounting('cmp_demo_mombasa');
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(UnknownCompanyError);
        expect(thrown).toMatchObject({ code: 'company_not_served', nonRetryable: true, companyId: 'cmp_demo_mombasa' });
        expect((thrown as Error).message).toBe(
          'company cmp_demo_mombasa is linked through no accounting application of tenants.json',
        );
      } finally {
        await access.close();
      }
    });

    it('uses the only accounting application for any company, as one application always did', async () => {
      const config = tenants({
        compliance: [compliance('retail', K.orgWide)],
        accounting: [accounting('books', DEMO_ACCOUNTING_API_KEY)],
      });
      const access = openTenantAccess(await openLiveTenants(config));
      try {
        expect(access.accounting()).toBe(access.accounting('cmp_demo_mombasa'));
        await access.accounting().listCompanies({ limit: 1 });
        expect(await lastApplication('accounting')).toBe('app_demo');
      } finally {
        await access.close();
      }
    });

    it('refuses accounting calls when no accounting application is configured', async () => {
      const access = openTenantAccess(
        await openLiveTenants(tenants({ compliance: [compliance('retail', K.orgWide)] })),
      );
      try {
        expect(() => access.accounting('cmp_demo_nairobi')).toThrow(UnknownCompanyError);
      } finally {
        await access.close();
      }
    });
  });

  it('holds entries of one service application to one rate-limit window: what one spent, the other does not overdraw', async () => {
    // Six a minute: resolving two entries takes four (identity and businesses each), the first till two more.
    const small = await startSandbox({
      fixture: {
        compliance: fastFixture((f) => {
          f.applications = f.applications?.map((app) =>
            app.id === DEMO.applications.retail ? { ...app, requestsPerMinute: 6 } : app,
          );
        }, 'sandbox'),
      },
    });
    try {
      const config = tenants({
        compliance: [
          compliance('nairobi-till', K.nairobi, undefined, small),
          compliance('mombasa-till', K.mombasa, undefined, small),
        ],
      });
      const access = openTenantAccess(await openLiveTenants(config));
      try {
        await access.compliance(B.nairobi).listItems({ businessId: B.nairobi });
        await access.compliance(B.nairobi).listItems({ businessId: B.nairobi });
        const err: unknown = await access
          .compliance(B.mombasa)
          .listItems({ businessId: B.mombasa })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).code).toBe(RATE_BUDGET_SPENT);
        expect(small.stats.snapshot().rateLimited).toBe(0);
      } finally {
        await access.close();
      }
    } finally {
      await small.close();
    }
  });

  it('closes every client', async () => {
    const config = tenants({
      compliance: [compliance('retail', K.orgWide), compliance('other', K.otherApplication)],
      accounting: [accounting('books', DEMO_ACCOUNTING_API_KEY)],
    });
    const access = openTenantAccess(await openLiveTenants(config));
    await access.close();
    await expect(access.compliance(B.nairobi).listItems({ businessId: B.nairobi })).rejects.toThrow();
    await expect(access.compliance(B.kisumu).listItems({ businessId: B.kisumu })).rejects.toThrow();
    await expect(access.accounting().listCompanies({ limit: 1 })).rejects.toThrow();
  });
});
