import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCallbackServer, type CallbackServer } from '../../src/callbacks/server.js';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import { CALLBACK_URL_MAX_LENGTH, callbackUrlProblem } from '../../src/compliance/callback-url.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { receivedHintsQuery, type callbackRecorder } from '../fixtures/workflows/callback-recorder.js';
import { eventually } from '../helpers/eventually.js';
import { useTestWorker } from '../helpers/test-worker.js';
import { memoryLogger } from './helpers.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/callback-recorder.ts', import.meta.url));
const SECRET = `long-ids-${randomUUID()}-${randomUUID()}`;
/** Temporal's default limit on a workflow id (dynamic config `limit.maxIDLengthLimit`), in UTF-8 bytes. */
const TEMPORAL_ID_MAX_BYTES = 1_000;
/** The SQL stores' column (`workflow_id VARCHAR(255)`): on PostgreSQL an id is also at most 255 characters. */
const SQL_ID_MAX_CHARACTERS = 255;
const characters = (text: string) => [...text].length;
const EMOJI_INVOICE = '🧾'.repeat(50);

/**
 * Any workflow id the project can create is reachable: a sale id `sale:<businessId>:<invoice number>` with an
 * invoice number of 50 emoji, and ids as long as every Temporal store allows (on PostgreSQL 255 characters, found
 * when this ran against the cluster; 1,000 bytes on the dev server). The sandbox delivers the result callback to
 * the minted URL and the signal reaches the workflow.
 */
describe('callbacks for long workflow ids, end to end (sandbox → receiver → Temporal)', () => {
  const { client, taskQueue } = useTestWorker(workflowsPath, 'callbacks-long-ids');
  let sandbox: Sandbox;
  let compliance: ComplianceClient;
  let server: CallbackServer;
  let minter: CallbackUrlMinter;

  beforeAll(async () => {
    sandbox = await startSandbox({ logger: false });
    compliance = new ComplianceClient({
      baseUrl: sandbox.complianceUrl,
      apiKey: DEMO.keys.nairobi,
      allowLoopbackCallbacks: true,
    });
    const verifier = new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret: SECRET });
    server = await startCallbackServer({ minter: verifier, client, logger: memoryLogger().logger });
    minter = new CallbackUrlMinter({ publicBaseUrl: server.url, secret: SECRET });
  });

  afterAll(async () => {
    await server?.close();
    await compliance?.close();
    await sandbox?.close();
  });

  async function deliveredToWorkflow(workflowId: string): Promise<{ url: string }> {
    const handle: WorkflowHandle<typeof callbackRecorder> = await client.workflow.start<typeof callbackRecorder>(
      'callbackRecorder',
      {
        taskQueue,
        workflowId,
      },
    );
    try {
      const url = minter.mint(workflowId);
      expect(url.length).toBeLessThanOrEqual(CALLBACK_URL_MAX_LENGTH);
      expect(callbackUrlProblem(url, { allowLoopback: true })).toBeUndefined();
      const { data } = await compliance.createSale(
        {
          traderInvoiceNumber: `${DEMO.invoicePrefixes.async}${randomUUID().slice(0, 18)}`,
          saleDate: '2025-06-30',
          lines: [{ itemId: DEMO.items.sugar, quantity: 1, unitPrice: 250 }],
          callbackUrl: url,
        },
        `long-ids:${randomUUID()}`,
      );
      const hints = await eventually(
        () => handle.query(receivedHintsQuery),
        (list) => list.length > 0,
        { timeoutMs: 15_000, what: 'a hint' },
      );
      expect(hints.map((hint) => hint.documentId)).toEqual([data.id]);
      const attempts = await sandbox.inspector.waitForCallbackAttempts(data.id, (list) => list.length > 0);
      expect(attempts.map((attempt) => attempt.status)).toEqual([202]);
      return { url };
    } finally {
      await handle.terminate();
    }
  }

  it('a sale whose invoice number is 50 emoji; its URL has the shape handed out before (old URLs keep working)', async () => {
    const workflowId = saleWorkflowId(`biz_${randomUUID().slice(0, 8)}`, EMOJI_INVOICE);
    const { url } = await deliveredToWorkflow(workflowId);
    expect(url).toBe(`${server.url}/callbacks/${encodeURIComponent(workflowId)}/${minter.token(workflowId)}`);
  });

  it('a sale id as long as every Temporal store allows (255 characters: a long business id and 50 emoji)', async () => {
    const businessLength = SQL_ID_MAX_CHARACTERS - characters(saleWorkflowId('', EMOJI_INVOICE));
    const businessId = `biz-${randomUUID()}-`.padEnd(businessLength, 'x');
    const workflowId = saleWorkflowId(businessId, EMOJI_INVOICE);
    expect(characters(workflowId)).toBe(SQL_ID_MAX_CHARACTERS);
    await deliveredToWorkflow(workflowId);
  });

  it('an id of 255 characters made of emoji, close to 1,000 bytes', async () => {
    const prefix = `sale:${randomUUID().slice(0, 7)}:`;
    const workflowId = `${prefix}${'😀'.repeat(SQL_ID_MAX_CHARACTERS - characters(prefix))}`;
    expect(characters(workflowId)).toBe(SQL_ID_MAX_CHARACTERS);
    expect(Buffer.byteLength(workflowId)).toBeGreaterThan(950);
    expect(Buffer.byteLength(workflowId)).toBeLessThanOrEqual(TEMPORAL_ID_MAX_BYTES);
    await deliveredToWorkflow(workflowId);
  });
});
