/**
 * Resolving a tenants configuration against the sandbox over real HTTP: which application serves which business,
 * and every refusal, each naming the tenant entry and never a key.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import type { ComplianceTenant, TenantLink, TenantsConfig } from '../../src/tenants/types.js';
import {
  resolveTenantDirectory,
  TenantServiceError,
  type ResolveTenantDirectoryOptions,
  type TenantDirectory,
} from '../../src/tenants/directory.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  INACTIVE_ACCOUNTING_API_KEY,
  OTHER_COMPANY_ID,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { sandboxTenants } from '../helpers/tenants.js';

const B = DEMO.businesses;
const businessesOf = (directory: TenantDirectory, application: string) =>
  directory.applications().find((a) => a.application === application)?.businesses ?? [];
const K = DEMO.keys;

let sandbox: Sandbox;
/** Every secret of both demo worlds: no error message may contain one. */
let secrets: string[];

beforeAll(async () => {
  // The retail application gets room for every test of the file; the other keeps its 60 a minute.
  const compliance = fastFixture((f) => {
    f.applications = f.applications?.map((app) =>
      app.id === DEMO.applications.retail ? { ...app, requestsPerMinute: 10_000 } : app,
    );
  }, 'sandbox');
  sandbox = await startSandbox({ fixture: { compliance } });
  secrets = [
    ...Object.values(K),
    ...sandbox.fixture.accounting.applications.flatMap((app) => [...app.apiKeys, ...app.clientSecrets]),
  ];
});

afterAll(async () => {
  await sandbox?.close();
});

function compliance(
  application: string,
  apiKey: string,
  options: { businesses?: string[]; requestsPerMinute?: number; baseUrl?: string } = {},
): ComplianceTenant {
  return {
    application,
    service: {
      baseUrl: options.baseUrl ?? sandbox.complianceUrl,
      apiKey,
      businessId: undefined,
      timeoutMs: 5_000,
      allowLoopbackCallbacks: true,
    },
    requestsPerMinute: options.requestsPerMinute ?? 120,
    businesses: options.businesses,
    source: `tenants.json: compliance (${application})`,
  };
}

const { accounting, link, tenants, otherAccountingKey } = sandboxTenants(() => sandbox);

type Check = (directory: TenantDirectory) => void | Promise<void>;

/** Resolves, runs `check` and closes the directory's clients. */
async function withDirectory(
  config: TenantsConfig,
  ...args: [check: Check] | [options: ResolveTenantDirectoryOptions, check: Check]
): Promise<void> {
  const [options, check] = args.length === 1 ? [{}, args[0]] : args;
  const directory = await resolveTenantDirectory(config, options);
  try {
    await check(directory);
  } finally {
    await directory.close();
  }
}

/** The error resolving `config` fails with: a ConfigError whose message names no secret. */
async function refusal(config: TenantsConfig): Promise<ConfigError> {
  const err: unknown = await resolveTenantDirectory(config).then(
    async (directory) => {
      await directory.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  const message = (err as ConfigError).message;
  for (const secret of secrets) expect(message).not.toContain(secret);
  return err as ConfigError;
}

describe('resolveTenantDirectory', () => {
  it('maps each business to the application whose key serves it: two applications, each its own businesses', async () => {
    const config = tenants({
      compliance: [compliance('retail', K.orgWide), compliance('other', K.otherApplication, { requestsPerMinute: 60 })],
    });
    await withDirectory(config, (directory) => {
      expect(directory.applicationOf(B.nairobi)).toBe('retail');
      expect(directory.applicationOf(B.mombasa)).toBe('retail');
      expect(directory.applicationOf(B.kisumu)).toBe('other');
      // A test key never reaches the production business: nobody serves it.
      expect(directory.applicationOf(B.production)).toBeUndefined();
      expect(directory.applicationOf('biz_nobody')).toBeUndefined();
      expect([...businessesOf(directory, 'retail')].sort()).toEqual([B.mombasa, B.nairobi]);
      expect(businessesOf(directory, 'other')).toEqual([B.kisumu]);
      expect(businessesOf(directory, 'nobody')).toEqual([]);

      const [retail, other] = directory.applications();
      expect(retail).toMatchObject({
        application: 'retail',
        serviceApplicationId: DEMO.applications.retail,
        requestsPerMinute: 120,
        source: 'tenants.json: compliance (retail)',
      });
      expect(other).toMatchObject({
        application: 'other',
        serviceApplicationId: DEMO.applications.other,
        requestsPerMinute: 60,
      });
      // The facts are for logs, metrics and the tenants CLI: no key in them, however they are printed.
      const printed = JSON.stringify(directory.applications());
      for (const secret of secrets) expect(printed).not.toContain(secret);
    });
  });

  it('paces an application to the service’s own limit when the file asks for more, and keeps a lower one', async () => {
    // The other application's limit is 60 a minute (X-RateLimit-Limit): 120 would only draw 429s.
    const config = tenants({
      compliance: [
        compliance('other', K.otherApplication, { requestsPerMinute: 120 }),
        compliance('retail', K.orgWide, { requestsPerMinute: 100 }),
      ],
    });
    await withDirectory(config, (directory) => {
      expect(
        directory
          .applications()
          .map((a) => [a.application, a.requestsPerMinute, a.configuredRequestsPerMinute, a.serviceRequestsPerMinute]),
      ).toEqual([
        ['other', 60, 120, 60],
        ['retail', 100, 100, 10_000],
      ]);
    });
  });

  it('says so in the log when an application is paced below the file, or entries of one service application overdraw it', async () => {
    const lines: Array<{ msg: string; application?: string; applications?: string[] }> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, callback) {
          lines.push(JSON.parse(String(chunk)) as { msg: string });
          callback();
        },
      }),
    );
    const config = tenants({
      compliance: [
        compliance('kisumu-a', K.otherApplication, { businesses: [B.kisumu] }),
        compliance('kisumu-b', K.otherApplication, { businesses: [] }),
      ],
    });
    await withDirectory(config, { logger }, (directory) => {
      expect(directory.applications().map((a) => a.requestsPerMinute)).toEqual([60, 60]);
    });
    expect(
      lines.filter((l) => l.msg.startsWith('application paced to the service’s own limit')).map((l) => l.application),
    ).toEqual(['kisumu-a', 'kisumu-b']);
    expect(lines.find((l) => l.msg.startsWith('entries share one service application'))).toMatchObject({
      applications: ['kisumu-a', 'kisumu-b'],
    });
    const printed = lines.map((l) => JSON.stringify(l)).join('\n');
    for (const secret of secrets) expect(printed).not.toContain(secret);
  });

  it('serves several businesses through one organisation-wide key, listed or not', async () => {
    const listed = tenants({ compliance: [compliance('group', K.orgWide, { businesses: [B.nairobi, B.mombasa] })] });
    await withDirectory(listed, (directory) => {
      expect(businessesOf(directory, 'group')).toEqual([B.nairobi, B.mombasa]);
    });
    const onlyOne = tenants({ compliance: [compliance('group', K.orgWide, { businesses: [B.mombasa] })] });
    await withDirectory(onlyOne, (directory) => {
      expect(businessesOf(directory, 'group')).toEqual([B.mombasa]);
      // Listed businesses are all it serves, though the key reaches more.
      expect(directory.applicationOf(B.nairobi)).toBeUndefined();
    });
  });

  it('serves a live key’s production business beside test keys’ sandbox businesses', async () => {
    const config = tenants({ compliance: [compliance('live', K.live), compliance('other', K.otherApplication)] });
    await withDirectory(config, (directory) => {
      expect(directory.applicationOf(B.production)).toBe('live');
    });
  });

  describe('a business two entries can serve (the explicit listing decides; otherwise refused)', () => {
    it('refuses two entries that both serve every business their keys reach, naming both and the business', async () => {
      const err = await refusal(
        tenants({ compliance: [compliance('group', K.orgWide), compliance('nairobi-till', K.nairobi)] }),
      );
      expect(err.message).toContain(
        `business ${B.nairobi} can be served by two entries, tenants.json: compliance (group) and tenants.json: compliance (nairobi-till)`,
      );
      expect(err.message).toContain('list it under the one that should serve it');
    });

    it('gives the business to the entry that lists it, and the rest to the one that lists none', async () => {
      const config = tenants({
        compliance: [
          compliance('group', K.orgWide),
          compliance('nairobi-till', K.nairobi, { businesses: [B.nairobi] }),
        ],
      });
      await withDirectory(config, (directory) => {
        expect(directory.applicationOf(B.nairobi)).toBe('nairobi-till');
        expect(directory.applicationOf(B.mombasa)).toBe('group');
        expect(businessesOf(directory, 'group')).toEqual([B.mombasa]);
      });
    });

    it('refuses a business listed under two entries', async () => {
      const err = await refusal(
        tenants({
          compliance: [
            compliance('group', K.orgWide, { businesses: [B.nairobi, B.mombasa] }),
            compliance('nairobi-till', K.nairobi, { businesses: [B.nairobi] }),
          ],
        }),
      );
      expect(err.message).toContain(
        `business ${B.nairobi} is listed under two entries, tenants.json: compliance (group) and tenants.json: compliance (nairobi-till): list it under one`,
      );
    });
  });

  it('refuses a listed business the key cannot act for, with the businesses it can', async () => {
    const err = await refusal(
      tenants({ compliance: [compliance('other', K.otherApplication, { businesses: [B.kisumu, B.nairobi] })] }),
    );
    expect(err.message).toContain(
      `tenants.json: compliance (other): unknown business ${B.nairobi}: the key cannot act for it (it can act for ${B.kisumu})`,
    );
  });

  describe('environments: test keys act for sandbox businesses, live keys for production ones', () => {
    it('refuses a test key naming a production business another entry’s live key lists', async () => {
      const err = await refusal(
        tenants({
          compliance: [
            compliance('group', K.orgWide, { businesses: [B.nairobi, B.production] }),
            compliance('live', K.live, { businesses: [] }),
          ],
        }),
      );
      expect(err.message).toContain(
        `tenants.json: compliance (group): business ${B.production} is a production business (tenants.json: compliance (live) lists it); a test key (cmp_sk_test_) acts only for sandbox businesses`,
      );
    });

    it('refuses a live key naming a sandbox business', async () => {
      const err = await refusal(
        tenants({
          compliance: [
            compliance('live', K.live, { businesses: [B.nairobi] }),
            compliance('group', K.orgWide, { businesses: [B.mombasa] }),
          ],
        }),
      );
      expect(err.message).toContain(
        `tenants.json: compliance (live): business ${B.nairobi} is a sandbox business (tenants.json: compliance (group) lists it); a live key (cmp_sk_live_) acts only for production businesses`,
      );
    });

    it('says which environment the key acts for when no entry shows the business’s', async () => {
      const err = await refusal(
        tenants({ compliance: [compliance('group', K.orgWide, { businesses: [B.production] })] }),
      );
      expect(err.message).toContain(
        `tenants.json: compliance (group): unknown business ${B.production}: the key cannot act for it`,
      );
      expect(err.message).toContain('this is a test key (cmp_sk_test_), which acts only for sandbox businesses');
    });
  });

  describe('keys the service refuses', () => {
    for (const [name, key] of [
      ['revoked', K.revoked],
      ['expired', K.expired],
      ['suspended', K.suspended],
    ] as const) {
      it(`names the entry of a ${name} key (401)`, async () => {
        const err = await refusal(tenants({ compliance: [compliance('retail', K.orgWide), compliance(name, key)] }));
        expect(err.message).toContain(
          `tenants.json: compliance (${name}): the compliance service at ${sandbox.complianceUrl} refused the key (401 invalid_api_key)`,
        );
        expect(err.message).not.toContain('compliance (retail):');
      });
    }

    it('names the entry of a key not allowed to read its identity (403)', async () => {
      await sandbox.inspector.addFault({
        service: 'compliance',
        path: '/v1/identity',
        kind: 'error',
        status: 403,
        times: 1,
      });
      try {
        const err = await refusal(tenants({ compliance: [compliance('retail', K.orgWide)] }));
        expect(err.message).toContain(
          `tenants.json: compliance (retail): the key is not allowed to read its identity at ${sandbox.complianceUrl} (403`,
        );
      } finally {
        await sandbox.inspector.clearFaults();
      }
    });

    it('names the entry of a key that is not in the compliance form', async () => {
      const err = await refusal(tenants({ compliance: [compliance('typo', DEMO_ACCOUNTING_API_KEY)] }));
      expect(err.message).toContain('tenants.json: compliance (typo) is not in the expected form');
    });

    it('names the entry of a refused accounting key', async () => {
      const err = await refusal(tenants({ accounting: [accounting('dormant', INACTIVE_ACCOUNTING_API_KEY)] }));
      expect(err.message).toContain(
        `tenants.json: accounting (dormant): the accounting service at ${sandbox.accountingUrl} refused the API key (401`,
      );
    });
  });

  it('reports every problem of the file at once', async () => {
    const err = await refusal(
      tenants({
        compliance: [
          compliance('revoked', K.revoked),
          compliance('other', K.otherApplication, { businesses: [B.nairobi] }),
        ],
        accounting: [accounting('dormant', INACTIVE_ACCOUNTING_API_KEY)],
      }),
    );
    expect(err.message).toMatch(/^tenants\.json: 3 problems:\n/);
    expect(err.message).toContain('tenants.json: compliance (revoked):');
    expect(err.message).toContain('tenants.json: compliance (other): unknown business');
    expect(err.message).toContain('tenants.json: accounting (dormant):');
  });

  it('fails naming the entry, not as a configuration error, when the service cannot be reached', async () => {
    const err: unknown = await resolveTenantDirectory(
      tenants({ compliance: [compliance('gone', K.orgWide, { baseUrl: 'http://127.0.0.1:9' })] }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TenantServiceError);
    expect(err).not.toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(
      'tenants.json: compliance (gone): the compliance service at http://127.0.0.1:9 cannot be reached',
    );
    expect((err as Error).message).not.toContain(K.orgWide);
  });

  describe('links: business → company → accounting application', () => {
    const twoOfEach = (links: TenantLink[]) =>
      tenants({
        compliance: [compliance('retail', K.orgWide), compliance('other', K.otherApplication)],
        accounting: [accounting('books', DEMO_ACCOUNTING_API_KEY), accounting('other-books', otherAccountingKey())],
        links,
      });

    it('maps each linked business to its company and each company to its accounting application', async () => {
      const config = twoOfEach([
        link(B.nairobi, 'cmp_demo_nairobi', 'books'),
        link(B.kisumu, OTHER_COMPANY_ID, 'other-books'),
      ]);
      await withDirectory(config, (directory) => {
        expect(directory.links()).toEqual([
          {
            businessId: B.nairobi,
            companyId: 'cmp_demo_nairobi',
            accounting: 'books',
            compliance: 'retail',
            source: `tenants.json: links (${B.nairobi})`,
          },
          {
            businessId: B.kisumu,
            companyId: OTHER_COMPANY_ID,
            accounting: 'other-books',
            compliance: 'other',
            source: `tenants.json: links (${B.kisumu})`,
          },
        ]);
        expect(directory.accountingApplicationOf('cmp_demo_nairobi')).toBe('books');
        expect(directory.accountingApplicationOf(OTHER_COMPANY_ID)).toBe('other-books');
        expect(directory.accountingApplicationOf('cmp_demo_mombasa')).toBeUndefined();
        expect(directory.accountingApplications().map((a) => [a.application, a.companies])).toEqual([
          ['books', ['cmp_demo_nairobi', 'cmp_demo_mombasa']],
          ['other-books', [OTHER_COMPANY_ID]],
        ]);
      });
    });

    it('refuses a link whose business no application serves', async () => {
      const err = await refusal(twoOfEach([link(B.production, 'cmp_demo_nairobi', 'books')]));
      expect(err.message).toContain(
        `tenants.json: links (${B.production}): business ${B.production} is served by no compliance application`,
      );
    });

    it('refuses a link to an accounting application that is not configured, or to a company its key cannot see', async () => {
      const err = await refusal(
        twoOfEach([link(B.nairobi, 'cmp_demo_nairobi', 'ledger'), link(B.mombasa, OTHER_COMPANY_ID, 'books')]),
      );
      expect(err.message).toContain(
        `tenants.json: links (${B.nairobi}): accounting application "ledger" is not configured`,
      );
      expect(err.message).toContain(
        `tenants.json: links (${B.mombasa}): company ${OTHER_COMPANY_ID} is not one accounting application "books" can see (it sees cmp_demo_nairobi, cmp_demo_mombasa)`,
      );
    });

    it('refuses one company linked through two accounting applications', async () => {
      const config = tenants({
        compliance: [compliance('retail', K.orgWide)],
        accounting: [accounting('books', DEMO_ACCOUNTING_API_KEY), accounting('books-again', DEMO_ACCOUNTING_API_KEY)],
        links: [link(B.nairobi, 'cmp_demo_nairobi', 'books'), link(B.mombasa, 'cmp_demo_nairobi', 'books-again')],
      });
      const err = await refusal(config);
      expect(err.message).toContain(
        `tenants.json: links (${B.mombasa}): company cmp_demo_nairobi is linked through accounting application "books-again" here and "books" in tenants.json: links (${B.nairobi})`,
      );
    });
  });

  it('reads at most `concurrency` entries at once', async () => {
    // Each identity answer takes 300 ms, and a slot asks again only once its answer is in: four identity requests
    // arriving within 300 ms of each other would mean four at once. Read from the sandbox's log, not the wall clock,
    // so a loaded machine cannot fail it.
    const latencyMs = 300;
    await sandbox.inspector.addFault({
      service: 'compliance',
      path: '/v1/identity',
      kind: 'latency',
      delayMs: latencyMs,
    });
    try {
      const many = Array.from({ length: 12 }, (_, i) =>
        compliance(`till-${i}`, K.nairobi, { businesses: i === 0 ? [B.nairobi] : [] }),
      );
      const since = Date.now();
      await withDirectory(tenants({ compliance: many }), { concurrency: 3 }, (directory) => {
        expect(directory.applications()).toHaveLength(12);
      });
      const arrivals = (await sandbox.inspector.requestLog({ since, service: 'compliance' }))
        .filter((r) => r.path === '/v1/identity')
        .map((r) => r.at)
        .sort((a, b) => a - b);
      expect(arrivals).toHaveLength(12);
      const atOnce = Math.max(...arrivals.map((at) => arrivals.filter((t) => t >= at && t < at + latencyMs).length));
      expect(atOnce).toBe(3);
    } finally {
      await sandbox.inspector.clearFaults();
    }
  });
});
