import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCallbackServer, type CallbackServer } from '../../src/callbacks/server.js';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import type { CallbackHint } from '../../src/contracts/sale.js';
import { receivedHintsQuery, type callbackRecorder } from '../fixtures/workflows/callback-recorder.js';
import { eventually } from '../helpers/eventually.js';
import { useTestWorker } from '../helpers/test-worker.js';
import { memoryLogger } from './helpers.js';

const workflowsPath = fileURLToPath(new URL('../fixtures/workflows/callback-recorder.ts', import.meta.url));
const SECRET = `e2e-${randomUUID()}-${randomUUID()}`;

/**
 * The whole path on real parts: the sandbox delivers a real result callback for an async sale to a URL
 * minted for a workflow; the receiver verifies it and signals the workflow on a real Temporal server.
 */
describe('callback server end to end (sandbox → receiver → Temporal)', () => {
  const logs = memoryLogger();
  const { client, taskQueue } = useTestWorker(workflowsPath, 'callbacks');
  const mintedUrls: string[] = [];
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
    // Verification needs only the secret; the URL is known once the server listens on its free port.
    const verifier = new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret: SECRET });
    server = await startCallbackServer({
      host: '127.0.0.1',
      port: 0,
      minter: verifier,
      client,
      logger: logs.logger,
    });
    minter = new CallbackUrlMinter({ publicBaseUrl: server.url, secret: SECRET });
  });

  afterAll(async () => {
    await server?.close();
    await compliance?.close();
    await sandbox?.close();
  });

  function mint(workflowId: string): string {
    const url = minter.mint(workflowId);
    mintedUrls.push(url);
    return url;
  }

  async function startRecorder(): Promise<WorkflowHandle<typeof callbackRecorder>> {
    return client.workflow.start<typeof callbackRecorder>('callbackRecorder', {
      taskQueue,
      workflowId: `callbacks-e2e-${randomUUID()}`,
    });
  }

  /** An async sale (ASYNC- prefix: 202 now, completed by the authority shortly after) reporting to `callbackUrl`. */
  async function createAsyncSale(callbackUrl: string): Promise<string> {
    const { data, meta } = await compliance.createSale(
      {
        traderInvoiceNumber: `${DEMO.invoicePrefixes.async}${randomUUID().slice(0, 18)}`,
        saleDate: '2025-06-30',
        lines: [{ itemId: DEMO.items.sugar, quantity: 1, unitPrice: 250 }],
        callbackUrl,
      },
      `callbacks-e2e:${randomUUID()}`,
    );
    expect(meta.status).toBe(202);
    return data.id;
  }

  function waitForHints(handle: WorkflowHandle, count: number): Promise<CallbackHint[]> {
    return eventually(
      () => handle.query(receivedHintsQuery),
      (hints) => hints.length >= count,
      { timeoutMs: 15_000, what: `${count} hints` },
    );
  }

  it('answers GET /health', async () => {
    const response = await request(`${server.url}/health`);
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toEqual({ status: 'ok' });
  });

  it("the sandbox's result callback reaches the workflow with the right document id, acknowledged 202", async () => {
    const handle = await startRecorder();
    try {
      const saleId = await createAsyncSale(mint(handle.workflowId));

      const [hint, ...more] = await waitForHints(handle, 1);
      const attempts = await sandbox.inspector.waitForCallbackAttempts(saleId, (list) => list.length > 0);
      expect(hint).toEqual({ documentId: saleId, event: 'sale.completed', callbackId: attempts[0]?.deliveryId });
      expect(more).toEqual([]);
      expect(attempts.map((a) => a.status)).toEqual([202]);
    } finally {
      await handle.terminate();
    }
  });

  it('a duplicated delivery is signalled once and the copy acknowledged 200 duplicate', async () => {
    sandbox.faults.add({ kind: 'callback-duplicate', duplicates: 1, times: 1 });
    const handle = await startRecorder();
    try {
      const saleId = await createAsyncSale(mint(handle.workflowId));

      const attempts = await sandbox.inspector.waitForCallbackAttempts(
        saleId,
        (list) => list.length === 2 && list.every((a) => a.status !== null),
      );
      expect(attempts.map((a) => [a.kind, a.status])).toEqual([
        ['scheduled', 202],
        ['duplicate', 200],
      ]);
      const hints = await waitForHints(handle, 1);
      expect(hints.map((h) => h.documentId)).toEqual([saleId]);
    } finally {
      await handle.terminate();
    }
  });

  it('a callback for an unknown workflow id is acknowledged 200 ignored', async () => {
    const saleId = await createAsyncSale(mint(`callbacks-e2e-never-started-${randomUUID()}`));

    const attempts = await sandbox.inspector.waitForCallbackAttempts(saleId, (list) => list.length > 0);
    expect(attempts.map((a) => a.status)).toEqual([200]);

    const direct = await request(mint(`callbacks-e2e-never-started-${randomUUID()}`), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'evt_direct', event: 'sale.completed', data: { sale: { id: saleId } } }),
    });
    expect(direct.statusCode).toBe(200);
    expect(await direct.body.json()).toEqual({ status: 'ignored' });
  });

  it('a callback for a closed workflow is acknowledged 200 ignored', async () => {
    const handle = await startRecorder();
    await handle.terminate();
    const saleId = await createAsyncSale(mint(handle.workflowId));

    const attempts = await sandbox.inspector.waitForCallbackAttempts(saleId, (list) => list.length > 0);
    expect(attempts.map((a) => a.status)).toEqual([200]);
  });

  it('a body of another shape (the contract does not show it) still reaches the workflow as a hint', async () => {
    const handle = await startRecorder();
    try {
      const response = await request(mint(handle.workflowId), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'sale=sal_other_shape&outcome=completed',
      });
      expect(response.statusCode).toBe(202);
      expect(await response.body.json()).toEqual({ status: 'accepted' });
      expect(await waitForHints(handle, 1)).toEqual([{ documentId: null, event: null, callbackId: null }]);
    } finally {
      await handle.terminate();
    }
  });

  it('a forged token is refused 401 and the workflow hears nothing', async () => {
    const handle = await startRecorder();
    try {
      const forged = `${server.url}/callbacks/${encodeURIComponent(handle.workflowId)}/${'x'.repeat(43)}`;
      const response = await request(forged, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'evt_forged', event: 'sale.completed', data: { sale: { id: 'sal_forged' } } }),
      });
      expect(response.statusCode).toBe(401);
      await response.body.dump();
      expect(await handle.query(receivedHintsQuery)).toEqual([]);
    } finally {
      await handle.terminate();
    }
  });

  it('the log never contains a token or a full callback URL, but shows the workflow ids', () => {
    const text = logs.text();
    expect(mintedUrls.length).toBeGreaterThanOrEqual(6);
    for (const url of mintedUrls) {
      const token = url.slice(url.lastIndexOf('/') + 1);
      expect(text).not.toContain(token);
      expect(text).not.toContain(url);
    }
    const lines = logs.lines();
    expect(lines.some((line) => line.msg === 'callback signalled to the workflow')).toBe(true);
    expect(lines.some((line) => String(line.msg).startsWith('callback ignored'))).toBe(true);
    const requestUrls = lines.map((line) => String((line.req as { url?: unknown } | undefined)?.url));
    expect(requestUrls.some((url) => /^\/callbacks\/[^/]+\/\[redacted\]$/.test(url))).toBe(true);
  });
});
