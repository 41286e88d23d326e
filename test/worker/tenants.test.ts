/**
 * A worker process serving a tenants file: its settings, and a real worker on the run's
 * Temporal server, its own task queue, serving two applications of the sandbox over real HTTP. Each business's
 * calls go out with the key of the application that serves it; a business none serves is refused before any
 * request; a file that leaves a business to two entries stops the start.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  OTHER_ACCOUNTING_CLIENT_SECRET,
  OTHER_COMPANY_ID,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { ConfigError } from '../../src/config/env.js';
import {
  getSaleStateQuery,
  SALE_WORKFLOW_TYPE,
  saleWorkflowId,
  type SaleInput,
  type SaleState,
} from '../../src/contracts/sale.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { schedulePurchasesSync } from '../../src/purchases/served-schedules.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { invoiceNumber } from '../helpers/invoice-number.js';
import { closeTestEnv, getTestEnv, uniqueTaskQueue } from '../helpers/temporal.js';

const B = DEMO.businesses;
const K = DEMO.keys;
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const OTHER_ACCOUNTING_API_KEY = 'sk_development_other_key_000000000001';
const SECRETS = [
  ...Object.values(K),
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  OTHER_ACCOUNTING_API_KEY,
  OTHER_ACCOUNTING_CLIENT_SECRET,
];

const dirs: string[] = [];

/** A directory holding `files` (tenants.json and key files), removed after the file's tests. */
function tenantsDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenants-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('loadWorkerSettings with a tenants file', () => {
  const compliance = 'https://compliance.example';
  const accounting = 'https://accounting.example';
  const file = (content: unknown) => join(tenantsDir({ 'tenants.json': content }), 'tenants.json');
  const twoApplications = {
    compliance: [
      { application: 'retail', apiKey: { value: K.orgWide }, baseUrl: compliance, businesses: [B.nairobi, B.mombasa] },
      { application: 'other', apiKey: { value: K.otherApplication }, baseUrl: compliance, requestsPerMinute: 60 },
    ],
    accounting: [{ application: 'books', apiKey: { value: DEMO_ACCOUNTING_API_KEY }, baseUrl: accounting }],
    links: [{ business: B.nairobi, company: 'cmp_demo_nairobi', accounting: 'books' }],
  };

  it('reads the tenants and sets no single service', () => {
    const settings = loadWorkerSettings({
      TENANTS_FILE: file(twoApplications),
      PAYLOAD_ENCRYPTION: 'off',
      COMPLIANCE_RATE_HEADROOM: '0.5',
      RECONCILE_EVERY: '12h',
    });
    expect(settings.tenants?.compliance.map((t) => t.application)).toEqual(['retail', 'other']);
    expect(settings.services).toMatchObject({ compliance: undefined, accounting: undefined, embeddedSandbox: false });
    expect(settings.worker.complianceRateHeadroom).toBe(0.5);
    expect(settings.reconciliation).toEqual({
      links: [{ businessId: B.nairobi, companyId: 'cmp_demo_nairobi' }],
      every: '12h',
    });
  });

  it('leaves 4 % of each budget unpaced unless COMPLIANCE_RATE_HEADROOM says otherwise', () => {
    expect(
      loadWorkerSettings({ TENANTS_FILE: file(twoApplications), PAYLOAD_ENCRYPTION: 'off' }).worker
        .complianceRateHeadroom,
    ).toBe(0.04);
    expect(
      loadWorkerSettings({
        TENANTS_FILE: file(twoApplications),
        PAYLOAD_ENCRYPTION: 'off',
        COMPLIANCE_RATE_HEADROOM: '0',
      }).worker.complianceRateHeadroom,
    ).toBe(0);
  });

  it('lets no embedded sandbox stand in for a tenant', () => {
    const message = messageOf(() =>
      loadWorkerSettings({ TENANTS_FILE: file(twoApplications), SANDBOX: 'embedded', PAYLOAD_ENCRYPTION: 'off' }),
    );
    expect(message).toMatch(/^SANDBOX=embedded and TENANTS_FILE are both set/);
  });

  it('refuses a business listed under two applications, naming both entries and neither key', () => {
    const twice = {
      compliance: [
        { application: 'retail', apiKey: { value: K.orgWide }, baseUrl: compliance, businesses: [B.nairobi] },
        { application: 'nairobi-till', apiKey: { value: K.nairobi }, baseUrl: compliance, businesses: [B.nairobi] },
      ],
    };
    const message = messageOf(() => loadWorkerSettings({ TENANTS_FILE: file(twice), PAYLOAD_ENCRYPTION: 'off' }));
    expect(message).toBe(
      `tenants.json: compliance[1] (nairobi-till): business ${B.nairobi} is already served by tenants.json: compliance[0] (retail)`,
    );
    for (const secret of SECRETS) expect(message).not.toContain(secret);
  });

  it('without TENANTS_FILE or TENANTS_DIR, is the single-key worker it always was', () => {
    const settings = loadWorkerSettings({
      COMPLIANCE_BASE_URL: compliance,
      COMPLIANCE_API_KEY: K.nairobi,
      ACCOUNTING_BASE_URL: accounting,
      ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
      PAYLOAD_ENCRYPTION: 'off',
    });
    expect(settings.tenants.origin).toBe('environment');
    expect(settings.services.compliance?.apiKey).toBe(K.nairobi);
    expect(settings.tenants.compliance[0]?.requestsPerMinute).toBe(120);
  });
});

describe('purchases sync schedules with tenants', () => {
  it('refuses PURCHASES_SYNC_BUSINESSES naming a business the tenants do not serve, before any schedule is made', async () => {
    const made = schedulePurchasesSync({
      // Never reached: the check comes first.
      client: undefined as never,
      served: [B.nairobi, B.kisumu],
      config: {
        sink: { kind: 'file', path: '/dev/null' },
        intervalMs: 60_000,
        businessIds: [B.nairobi, B.mombasa],
        listing: {},
      },
      logger: pino({ level: 'silent' }),
    });
    await expect(made).rejects.toThrow(ConfigError);
    await expect(made).rejects.toThrow(
      `PURCHASES_SYNC_BUSINESSES: ${B.mombasa} is served by no compliance application of the tenants`,
    );
  });
});

describe('a worker process serving a tenants file', () => {
  let sandbox: Sandbox;
  let connected: WorkerProcess;
  let running: Promise<void>;
  let taskQueue: string;
  let dir: string;
  const logLines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    }),
  );
  const schedules: string[] = [];

  const temporalEnv = () => ({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    PAYLOAD_ENCRYPTION: 'off',
  });

  beforeAll(async () => {
    // The SDK's quiet runtime, before the worker's connections make the default one.
    await getTestEnv();
    sandbox = await startSandbox({ fixture: { compliance: fastFixture() } });
    // The retail key could act for Mombasa too: the file has it serve Nairobi only.
    dir = tenantsDir({
      'other.key': `${K.otherApplication}\n`,
      'tenants.json': {
        compliance: [
          {
            application: 'retail',
            apiKey: { value: K.orgWide },
            baseUrl: sandbox.complianceUrl,
            businesses: [B.nairobi],
          },
          {
            application: 'other',
            apiKey: { file: 'other.key' },
            baseUrl: sandbox.complianceUrl,
            requestsPerMinute: 60,
          },
        ],
        accounting: [
          {
            application: 'books',
            apiKey: { env: 'TENANTS_TEST_BOOKS_KEY' },
            clientSecret: { value: DEMO_ACCOUNTING_CLIENT_SECRET },
            baseUrl: sandbox.accountingUrl,
          },
          {
            application: 'other-books',
            apiKey: { value: OTHER_ACCOUNTING_API_KEY },
            clientSecret: { value: OTHER_ACCOUNTING_CLIENT_SECRET },
            baseUrl: sandbox.accountingUrl,
          },
        ],
        links: [
          { business: B.nairobi, company: 'cmp_demo_nairobi', accounting: 'books' },
          { business: B.kisumu, company: OTHER_COMPANY_ID, accounting: 'other-books' },
        ],
      },
    });
    const settings = loadWorkerSettings({
      ...temporalEnv(),
      TENANTS_FILE: join(dir, 'tenants.json'),
      TENANTS_TEST_BOOKS_KEY: DEMO_ACCOUNTING_API_KEY,
      WORKER_MAKE_CURRENT: 'true',
      COMPLIANCE_RATE_HEADROOM: '0',
      COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
      PURCHASES_SINK: `file:${join(dir, 'purchases.ndjson')}`,
    });
    taskQueue = uniqueTaskQueue('tenants');
    connected = await WorkerProcess.start(settings, { logger: logger, taskQueue });
    schedules.push(
      ...connected.purchases.schedules.map((s) => s.scheduleId),
      ...connected.reconciliation.map((s) => s.scheduleId),
    );
    running = connected.run();
  });

  afterAll(async () => {
    for (const id of schedules)
      await connected.client.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    if (connected) {
      connected.shutdown();
      await running;
      await connected.close();
    }
    await sandbox?.close();
    await closeTestEnv();
  });

  function sale(businessId: string, itemId: string): SaleInput {
    return {
      businessId,
      traderInvoiceNumber: invoiceNumber(),
      saleDate: '2026-11-21',
      lines: [{ itemId, quantity: 1, unitPrice: 250 }],
      customer: { name: 'Achieng Otieno' },
      options: { refundWindowDays: 0 },
    };
  }

  function start(input: SaleInput): Promise<WorkflowHandle> {
    return connected.client.workflow.start(SALE_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
      args: [input],
    });
  }

  it('talks to Temporal through one connection: its client shares the native one its workers poll through', () => {
    expect(connected.client.connection).toBeInstanceOf(NativeConnection);
    const { workflows, compliance, accounting } = connected.workers;
    for (const worker of [workflows, compliance, accounting])
      expect(worker.options.connection).toBe(connected.client.connection);
  });

  it('says which applications it serves and how many businesses each, never a key; schedules only what it serves', () => {
    const ready = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry.msg === 'workers ready');
    expect(ready?.tenants).toEqual({
      origin: `TENANTS_FILE ${join(dir, 'tenants.json')}`,
      businesses: 2,
      compliance: [
        { application: 'retail', businesses: 1, requestsPerMinute: 120 },
        { application: 'other', businesses: 1, requestsPerMinute: 60 },
      ],
      accounting: [
        { application: 'books', companies: 2 },
        { application: 'other-books', companies: 1 },
      ],
      links: 2,
    });
    // The queue's limit: both applications' budgets, 180 a minute.
    expect(ready?.activitiesPerSecond).toMatchObject({ compliance: 3 });
    for (const secret of SECRETS) expect(logLines.join('\n')).not.toContain(secret);
    // The retail key can act for Mombasa, but no entry serves it: no purchases sync for it.
    expect(connected.purchases.schedules.map((s) => s.businessId).sort()).toEqual([B.nairobi, B.kisumu].sort());
    expect(connected.reconciliation.map((s) => [s.businessId, s.companyId])).toEqual([
      [B.nairobi, 'cmp_demo_nairobi'],
      [B.kisumu, OTHER_COMPANY_ID],
    ]);
  });

  it("files each business's sale with the key of the application that serves it", { timeout: 60_000 }, async () => {
    const since = Date.now();
    const nairobi = sale(B.nairobi, DEMO.items.sugar);
    const kisumu = sale(B.kisumu, DEMO.items.kisumuRice);
    const handles = await Promise.all([start(nairobi), start(kisumu)]);
    const states = (await Promise.all(handles.map((h) => h.result()))) as SaleState[];
    expect(states.map((s) => s.sale?.status)).toEqual(['completed', 'completed']);

    const [nairobiDoc] = await sandbox.inspector.documents({
      businessId: B.nairobi,
      traderInvoiceNumber: nairobi.traderInvoiceNumber,
    });
    const [kisumuDoc] = await sandbox.inspector.documents({
      businessId: B.kisumu,
      traderInvoiceNumber: kisumu.traderInvoiceNumber,
    });
    expect(nairobiDoc?.applicationId).toBe(DEMO.applications.retail);
    expect(kisumuDoc?.applicationId).toBe(DEMO.applications.other);
    // One createSale per sale, each under its own application: neither went out with the other's key.
    const creates = (await sandbox.inspector.requestLog({ since, service: 'compliance' })).filter(
      (r) => r.method === 'POST' && r.route === '/v1/sales',
    );
    expect(creates.map((r) => r.applicationId).sort()).toEqual([DEMO.applications.other, DEMO.applications.retail]);
    expect(creates.every((r) => r.status >= 200 && r.status < 300)).toBe(true);
    // Workflows carry business ids only: the keys are resolved inside the worker.
    for (const handle of handles) {
      const history = JSON.stringify(historyToJSON(await handle.fetchHistory()));
      for (const secret of SECRETS) expect(history).not.toContain(secret);
    }
  });

  it(
    'holds a sale for a business no application serves before any request: it waits, refused by the placement',
    { timeout: 60_000 },
    async () => {
      const since = Date.now();
      const mombasa = sale(B.mombasa, DEMO.items.mombasaWater);
      const handle = await start(mombasa);
      try {
        const state = await eventually(
          () => handle.query(getSaleStateQuery),
          (s) => s.step === 'awaiting_business' || s.parked !== null || s.step === 'failed',
          { timeoutMs: 20_000, intervalMs: 200, what: 'the sale waiting for its business' },
        );
        expect(state.step).toBe('awaiting_business');
        expect(state.awaitingBusiness?.message).toContain(
          `business ${B.mombasa} is served by no compliance application`,
        );
        const events = (await handle.fetchHistory()).events ?? [];
        // Refused by the placement (a local activity, not retried by Temporal: the sale waits and asks again itself),
        // before any activity was scheduled.
        const refusals = events.flatMap((e) =>
          e.markerRecordedEventAttributes?.failure ? [e.markerRecordedEventAttributes.failure] : [],
        );
        expect(refusals.map((f) => f.applicationFailureInfo)).toMatchObject([
          { type: FAILURE_TYPES.businessNotServed, nonRetryable: true },
        ]);
        expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
        // Nothing of a sale reached the service: no item list, no createSale, no document.
        const saleRequests = (await sandbox.inspector.requestLog({ since, service: 'compliance' })).filter((r) =>
          /^\/v1\/(sales|items)/.test(r.route),
        );
        expect(saleRequests).toEqual([]);
        expect(
          await sandbox.inspector.documents({
            businessId: B.mombasa,
            traderInvoiceNumber: mombasa.traderInvoiceNumber,
          }),
        ).toEqual([]);
      } finally {
        await handle.terminate('test over').catch(() => undefined);
      }
    },
  );

  it(
    'stops the start, exit 2, when two entries can serve one business, naming both and neither key',
    { timeout: 120_000 },
    async () => {
      const contested = tenantsDir({
        'tenants.json': {
          compliance: [
            // Neither lists its businesses; both keys can act for Nairobi.
            { application: 'retail', apiKey: { value: K.orgWide }, baseUrl: sandbox.complianceUrl },
            { application: 'nairobi-till', apiKey: { value: K.nairobi }, baseUrl: sandbox.complianceUrl },
          ],
        },
      });
      const child = spawn(tsx, ['src/cli/worker.ts'], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...temporalEnv(),
          TENANTS_FILE: join(contested, 'tenants.json'),
        },
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code, output).toBe(2);
      expect(output).toContain(
        `configuration error: business ${B.nairobi} can be served by two entries, tenants.json: compliance[0] (retail) and tenants.json: compliance[1] (nairobi-till)`,
      );
      expect(output).not.toContain('workers ready');
      for (const secret of SECRETS) expect(output).not.toContain(secret);
    },
  );
});
