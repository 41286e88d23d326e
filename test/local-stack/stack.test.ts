/**
 * `npm start`'s default stack (startStack, as tools/local-stack/start.ts runs it, headless and in memory): two
 * merchants on two keys, served from the tenants file the stack writes for its own sandbox by a worker started as a
 * deployment starts one (WorkerProcess.start). Each merchant's sale is filed with its own application's key;
 * each merchant's books send their webhooks to their own path; the tenants file is gone once the stack stops.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SalesClient } from '../../src/client/index.js';
import type { SaleInput } from '../../src/contracts/sale.js';
import { createLogger } from '../../src/logger.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { LOCAL_MERCHANTS } from '../../tools/local-stack/local-tenants.js';
import { startStack, type Stack } from '../../tools/local-stack/stack.js';
import { eventually } from '../helpers/eventually.js';

const run = randomBytes(4).toString('hex').toUpperCase();
const dir = mkdtempSync(join(tmpdir(), 'local-stack-'));
let stack: Stack;
let tenantsFile: string;

beforeAll(async () => {
  stack = await startStack({
    // Whatever this machine configures: no temporal.toml profile, a payload key of this run's own (nothing written into the checkout).
    env: {
      TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml',
      PAYLOAD_KEYS: `stack-test:${randomBytes(32).toString('base64')}`,
    },
    logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', name: 'stack' }),
    headless: true,
    dbFilename: null,
    purchasesFile: join(dir, 'purchases.ndjson'),
  });
  tenantsFile = stack.tenantsFile!;
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function sale(businessId: string, itemId: string, prefix: string): SaleInput {
  return {
    businessId,
    traderInvoiceNumber: `${prefix}STACK-${run}`,
    saleDate: '2026-11-21',
    lines: [{ itemId, quantity: 1, unitPrice: 100 }],
    options: { refundWindowDays: 0 },
  };
}

describe('the local stack', () => {
  it('serves two merchants from a tenants file of its own', () => {
    expect(stack.shape).toBe('merchants');
    expect(stack.services).toBeUndefined();
    expect(stack.merchants?.map((m) => m.application)).toEqual(['demo-retail', 'other-integrator']);
    const file = JSON.parse(readFileSync(tenantsFile, 'utf8')) as {
      compliance: Array<{ application: string; baseUrl: string }>;
    };
    expect(file.compliance.map((c) => [c.application, c.baseUrl])).toEqual([
      ['demo-retail', stack.sandbox!.complianceUrl],
      ['other-integrator', stack.sandbox!.complianceUrl],
    ]);
  });

  it("files each merchant's sale with its own application's key", async () => {
    const sales = new SalesClient(stack.client);
    const inputs = [
      sale(DEMO.businesses.nairobi, DEMO.items.sugar, ''),
      sale(DEMO.businesses.kisumu, DEMO.items.kisumuRice, 'KSM-'),
    ];
    for (const input of inputs) await sales.startSale(input);
    for (const [input, merchant] of [
      [inputs[0]!, LOCAL_MERCHANTS.retail],
      [inputs[1]!, LOCAL_MERCHANTS.other],
    ] as const) {
      const state = await eventually(
        () => sales.getState(input.businessId, input.traderInvoiceNumber),
        (s) => s.step === 'completed',
        { timeoutMs: 60_000, intervalMs: 200, what: `${input.traderInvoiceNumber} completed` },
      );
      expect(state.sale?.receipt?.cuInvoiceNo).toBeTruthy();
      const documents = await stack.sandbox!.inspector.documents({
        businessId: input.businessId,
        traderInvoiceNumber: input.traderInvoiceNumber,
        type: 'sale',
      });
      expect(
        documents.map((d) => d.applicationId),
        input.businessId,
      ).toEqual([merchant.serviceApplicationId]);
    }
  }, 90_000);

  it("points each merchant's books' webhooks at its own path of the receiver", async () => {
    expect(stack.webhooksReceived).toEqual(['demo-books', 'other-books']);
    const endpoints = (
      (await (await fetch(`${stack.sandbox!.accountingUrl}/__sandbox/webhook-endpoints`)).json()) as {
        endpoints: Array<{ applicationId: string; url: string }>;
      }
    ).endpoints;
    expect(Object.fromEntries(endpoints.map((e) => [e.applicationId, e.url]))).toMatchObject({
      app_demo: `${stack.worker.callbacks!.url}/webhooks/accounting/demo-books`,
      app_other: `${stack.worker.callbacks!.url}/webhooks/accounting/other-books`,
    });
  });

  it('removes its tenants file when it stops', async () => {
    expect(existsSync(tenantsFile)).toBe(true);
    await stack.stop();
    expect(existsSync(tenantsFile)).toBe(false);
  });
});
