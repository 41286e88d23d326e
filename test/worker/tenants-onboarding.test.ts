/**
 * A merchant onboarded by editing the tenants file, as a fleet sees it: two worker processes each reloading the file
 * on its own clock, and the merchant's first sale arriving a second after the edit, before either has reloaded. The
 * sale waits, sending nothing, and is signed by itself once the workers serve the business: nobody retries it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import {
  getSaleStateQuery,
  SALE_WORKFLOW_TYPE,
  saleWorkflowId,
  type SaleInput,
  type SaleState,
} from '../../src/contracts/sale.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { invoiceNumber } from '../helpers/invoice-number.js';
import { closeTestEnv, getTestEnv, uniqueTaskQueue } from '../helpers/temporal.js';

const B = DEMO.businesses;
const K = DEMO.keys;
const RELOAD_SECONDS = 5;

describe('a merchant onboarded by a tenants file change, on a fleet of two workers', () => {
  let sandbox: Sandbox;
  let dir: string;
  let taskQueue: string;
  const workers: Array<{ connected: WorkerProcess; running: Promise<void> }> = [];
  const handles: WorkflowHandle[] = [];

  const retail = () => ({
    application: 'retail',
    apiKey: { value: K.orgWide },
    baseUrl: sandbox.complianceUrl,
    businesses: [B.nairobi],
  });
  const other = () => ({ application: 'other', apiKey: { value: K.otherApplication }, baseUrl: sandbox.complianceUrl });
  const writeTenants = (compliance: unknown[]) =>
    writeFileSync(join(dir, 'tenants.json'), JSON.stringify({ compliance }, null, 2));

  beforeAll(async () => {
    await getTestEnv();
    sandbox = await startSandbox({ fixture: { compliance: fastFixture() } });
    dir = mkdtempSync(join(tmpdir(), 'tenants-onboarding-'));
    writeTenants([retail()]);
    taskQueue = uniqueTaskQueue('tenants-onboarding');
    const settings = loadWorkerSettings({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      PAYLOAD_ENCRYPTION: 'off',
      TENANTS_FILE: join(dir, 'tenants.json'),
      TENANTS_RELOAD_SECONDS: String(RELOAD_SECONDS),
      WORKER_MAKE_CURRENT: 'true',
      COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
    });
    for (let i = 0; i < 2; i++) {
      const connected = await WorkerProcess.start(settings, { logger: pino({ level: 'silent' }), taskQueue });
      workers.push({ connected, running: connected.run() });
    }
  });

  afterAll(async () => {
    for (const handle of handles) await handle.terminate('test over').catch(() => undefined);
    for (const { connected, running } of workers) {
      connected.shutdown();
      await running;
      await connected.close();
    }
    await sandbox?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await closeTestEnv();
  });

  it('signs the first sale, started a second after the edit and before any reload, by itself and once', async () => {
    const [first] = workers;
    const served = () => workers.map(({ connected }) => connected.tenants.current().applicationOf(B.kisumu));
    expect(served()).toEqual([undefined, undefined]);

    writeTenants([retail(), other()]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const input: SaleInput = {
      businessId: B.kisumu,
      traderInvoiceNumber: invoiceNumber(),
      saleDate: '2026-11-21',
      lines: [{ itemId: DEMO.items.kisumuRice, quantity: 1, unitPrice: 250 }],
      options: { refundWindowDays: 0 },
    };
    const handle = await first!.connected.client.workflow.start(SALE_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
      args: [input],
    });
    handles.push(handle);
    const edited = Date.now() - 1_000;

    const signed = await eventually(
      () => handle.query(getSaleStateQuery),
      (s: SaleState) => s.sale?.status === 'completed',
      { timeoutMs: 40_000, intervalMs: 200, what: 'the onboarded merchant’s first sale signed' },
    );
    const seconds = (Date.now() - edited) / 1000;
    const events = signed.history.map((h) => h.event);
    // A sale that found its business unserved waited, and went on with no operator's retry. Whether it finds it
    // unserved depends on where each worker's reload tick falls (every RELOAD_SECONDS from its own start); the wait
    // itself is held in test/worker/tenants-live.test.ts and test/workflows/sale-logic.test.ts.
    const waited = events.includes(`waiting for an application to serve business ${B.kisumu}`);
    if (waited) expect(events.some((e) => e.startsWith('business served after'))).toBe(true);
    expect(events.filter((e) => e.includes('operator'))).toEqual([]);
    expect(signed.submissions).toBe(1);
    // Both workers serve it once each has reloaded (every RELOAD_SECONDS from its own start), whichever signed it.
    await eventually(
      async () => served(),
      (now) => now.every((application) => application === 'other'),
      { timeoutMs: RELOAD_SECONDS * 1000 + 5_000, intervalMs: 200, what: 'both workers serving the merchant' },
    );
    // The slower worker's reload, or the sale's own try, sends it on.
    expect(seconds).toBeLessThan(RELOAD_SECONDS * 2 + 10);
    // One document at the service: never twice.
    const filed = await sandbox.inspector.documents({ traderInvoiceNumber: input.traderInvoiceNumber });
    expect(filed).toHaveLength(1);
  });
});
