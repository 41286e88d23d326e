/**
 * The Temporal web UI of the local stack, as `npm start` runs it (startStack: dev server with its UI, codec server,
 * embedded sandbox, workers), driven by headless Chromium. An operator sees why a sale is parked in its current
 * details, and reads the customer through the codec server, while the history itself holds only ciphertext.
 * Screenshots: .cache/screenshots/parked-sale.png and customer-decoded.png.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SalesClient } from '../../src/client/index.js';
import { createLogger } from '../../src/logger.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startStack, type Stack } from '../../tools/local-stack/stack.js';
import type { SaleInput, SaleState } from '../../src/contracts/sale.js';
import { eventually } from '../helpers/eventually.js';
import { chromiumUnavailable, launchChromium, screenshot, textSelector, waitForFrameWithText } from './chromium.js';
import { rawHistory } from './raw-history.js';

const unavailable = chromiumUnavailable();
const skipNote = `browser test skipped: ${unavailable} (in CI, with CI set, it fails instead)`;

const run = randomBytes(4).toString('hex');
const customerName = `Wanjiku Browser-${run}`;
// An item the business does not have: the sandbox refuses it and the sale parks for an operator.
const missingItem = `itm_ui_missing_${run}`;
const sale: SaleInput = {
  businessId: DEMO.businesses.nairobi,
  traderInvoiceNumber: `UI-${run}`,
  saleDate: '2026-11-21',
  customer: { name: customerName },
  lines: [{ itemId: missingItem, quantity: 1, unitPrice: 10 }],
};

// The SvelteKit UI loads, polls and decodes in the browser: waits are generous, and shorter than the test's
// timeout so a missing text fails with the text's name (and a screenshot) rather than a bare timeout.
const UI_WAIT_MS = 25_000;
const TEST_TIMEOUT_MS = 60_000;

let stack: Stack | undefined;
let browser: Browser | undefined;
let started: { workflowId: string; runId: string };
let parked: SaleState;

beforeAll(async () => {
  if (unavailable) {
    if (process.env.CI)
      throw new Error(`the browser test cannot run: ${unavailable}; CI is set, so it fails instead of skipping`);
    console.warn(skipNote);
    return;
  }
  // What tools/local-stack/start.ts does, on the embedded sandbox and an in-memory server whatever this machine
  // configures, with a key of this run's own: encrypted as a local stack is, without writing .temporal/payload-keys
  // into the checkout.
  stack = await startStack({
    env: {
      TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml',
      PAYLOAD_KEYS: `ui-test:${randomBytes(32).toString('base64')}`,
    },
    logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', name: 'stack' }),
    dbFilename: null,
  });
  if (!stack.uiUrl || !stack.codecUrl)
    throw new Error(`the stack started no web UI (${stack.uiUrl}) or codec server (${stack.codecUrl})`);
  const sales = new SalesClient(stack.client);
  const { workflowId, runId } = await sales.startSale(sale);
  if (!runId) throw new Error(`starting ${workflowId} returned no run id`);
  started = { workflowId, runId };
  parked = await eventually(
    () => sales.getState(sale.businessId, sale.traderInvoiceNumber),
    (s) => s.parked !== null,
    {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'the sale parked',
    },
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A new tab on the sale's workflow page (its event history, with the decoded input above it). */
async function openSale(): Promise<Page> {
  const page = await browser!.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  const url = `${stack!.uiUrl}/namespaces/${stack!.namespace}/workflows/${encodeURIComponent(started.workflowId)}/${started.runId}/history`;
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  return page;
}

describe('the Temporal UI of the local stack', () => {
  it(
    "shows a parked sale's reason in its current details",
    async (ctx) => {
      ctx.skip(unavailable !== undefined, skipNote);
      const page = await openSale();
      let details: string;
      try {
        await (await page.waitForSelector('::-p-text(User Metadata)'))!.click();
        await page.waitForSelector('::-p-text(Current Details)');
        // The reason itself, which only the current details show (the static details list the item too).
        const frame = await waitForFrameWithText(page, parked.parked!.message, UI_WAIT_MS);
        details = await frame.$eval('body', (body) => body.innerText);
      } finally {
        await screenshot(page, 'parked-sale.png');
      }
      expect(details).toContain('Step: parked');
      expect(details).toContain(
        `Parked: ${parked.parked!.code} since ${parked.parked!.since}: ${parked.parked!.message}`,
      );
      expect(details).toContain('Resolve with the update: retry or cancel');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "shows the customer's name decoded by the codec server, while the raw history holds no trace of it",
    async (ctx) => {
      ctx.skip(unavailable !== undefined, skipNote);
      const page = await openSale();
      try {
        await page.waitForSelector('::-p-text(Input)');
        const name = await page.waitForSelector(textSelector(customerName));
        // The line of the decoded input, not some other text that happens to carry the name.
        expect(await name!.evaluate((element) => element.parentElement?.textContent ?? '')).toContain(
          `"name": "${customerName}"`,
        );
      } finally {
        await screenshot(page, 'customer-decoded.png');
      }

      const raw = await rawHistory({ address: stack!.temporalAddress, namespace: stack!.namespace, ...started });
      expect(raw.text.includes(customerName), 'the customer name is in the raw history').toBe(false);
      // The search above looked at this sale's history, decoded where the CLI prints base64, and found it encrypted.
      expect(raw.events).toBeGreaterThan(5);
      expect(raw.text).toContain(sale.traderInvoiceNumber);
      expect(raw.text).toContain('binary/encrypted');
    },
    TEST_TIMEOUT_MS,
  );
});
