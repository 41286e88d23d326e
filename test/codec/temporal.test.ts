/**
 * A real Temporal round trip on the run's shared dev server: a worker and client with the codec write no
 * customer data into the history; a client without the codec sees only ciphertext; the client with it reads
 * everything back; a plain-JSON start (no codec) still runs and the worker's own writes are encrypted.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { ApplicationFailure, type DataConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDataConverter, failureConverterPath } from '../../src/codec/data-converter.js';
import { startCodecServer } from '../../src/codec/server.js';
import { resolveTemporalExecutable } from '../../tools/temporal-cli/resolver.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';
import type { Customer, CustomerActivities } from './fixtures/customer-workflow.js';
import { customerReceipt } from './fixtures/customer-workflow.js';
import { newKey, ring } from './helpers.js';

const execFileAsync = promisify(execFile);
type History = proto.temporal.api.history.v1.IHistory;
const HistoryProto = proto.temporal.api.history.v1.History;

const customer: Customer = { name: 'Nyokabi Wairimu-Kiprotich', pin: 'A987654321Q' };
const activities: CustomerActivities = {
  async greet(c) {
    return `Karibu ${c.name}`;
  },
  async refuse(c) {
    throw ApplicationFailure.nonRetryable(`card declined for ${c.name} (${c.pin})`, 'declined');
  },
};
const expected = {
  greeting: `Karibu ${customer.name}`,
  refusal: `card declined for ${customer.name} (${customer.pin})`,
};

const k1 = newKey();
const k2 = newKey();
const encrypted: DataConverter = createDataConverter(
  ring([
    ['k1', k1],
    ['k2', k2],
  ]),
);

const encryptedQueue = uniqueTaskQueue('codec-encrypted');
const plainQueue = uniqueTaskQueue('codec-plain');
let secureClient: Client;
let rawClient: Client;
const workers: Worker[] = [];
const running: Promise<void>[] = [];

beforeAll(async () => {
  const env = await getTestEnv();
  const namespace = env.namespace ?? 'default';
  // The failure converter runs inside workflow code too: bundle with the same path the data converter names.
  const workflowBundle: WorkflowBundle = await bundleWorkflowCode({
    workflowsPath: new URL('./fixtures/customer-workflow.ts', import.meta.url).pathname,
    failureConverterPath: failureConverterPath(),
    logger: testLogger,
  });
  const base = { connection: env.nativeConnection, namespace, workflowBundle, activities };
  workers.push(await Worker.create({ ...base, taskQueue: encryptedQueue, dataConverter: encrypted }));
  workers.push(await Worker.create({ ...base, taskQueue: plainQueue }));
  running.push(...workers.map((w) => w.run()));
  secureClient = new Client({ connection: env.connection, namespace, dataConverter: encrypted });
  rawClient = new Client({ connection: env.connection, namespace });
});

afterAll(async () => {
  for (const w of workers) w.shutdown();
  await Promise.all(running);
  await closeTestEnv();
});

function historyBytes(history: History): Buffer {
  return Buffer.from(HistoryProto.encode(history).finish());
}

function text(bytes: Uint8Array | null | undefined): string {
  return new TextDecoder().decode(bytes ?? new Uint8Array());
}

function eventOf(history: History, attributes: string) {
  const event = history.events?.find((e) => (e as Record<string, unknown>)[attributes] != null);
  expect(event, attributes).toBeDefined();
  return (
    event as Record<
      string,
      { input?: proto.temporal.api.common.v1.IPayloads; result?: proto.temporal.api.common.v1.IPayloads }
    >
  )[attributes]!;
}

describe('encrypted histories on a real Temporal server', () => {
  it('the history holds no customer data; the client with the codec reads it all back', async () => {
    const workflowId = `codec-${randomUUID()}`;
    const handle = await secureClient.workflow.start(customerReceipt, {
      taskQueue: encryptedQueue,
      workflowId,
      args: [customer],
      memo: { customer: customer.name },
    });
    expect(await handle.result()).toEqual(expected);

    // With the codec: memo and history payloads decode.
    expect((await handle.describe()).memo).toEqual({ customer: customer.name });

    // Without the codec: the raw history, every byte of it.
    const history = await rawClient.workflow.getHandle(workflowId).fetchHistory();
    const raw = historyBytes(history);
    expect(raw.includes(customer.name)).toBe(false);
    expect(raw.includes(customer.pin)).toBe(false);
    expect(raw.includes('card declined')).toBe(false); // the activity's failure message is encrypted too

    const input = eventOf(history, 'workflowExecutionStartedEventAttributes').input!.payloads![0]!;
    expect(text(input.metadata?.encoding)).toBe('binary/encrypted');
    expect(text(input.metadata?.['encryption-key-id'])).toBe('k2'); // the newest key encrypts

    // The client without the codec cannot read the result: an error, never ciphertext as data.
    await expect(rawClient.workflow.getHandle(workflowId).result()).rejects.toThrow();
  });

  it('control: the same workflow without the codec leaves the name in the history (so the check above means something)', async () => {
    const workflowId = `codec-plain-${randomUUID()}`;
    const handle = await rawClient.workflow.start(customerReceipt, {
      taskQueue: plainQueue,
      workflowId,
      args: [customer],
    });
    expect(await handle.result()).toEqual(expected);
    expect(historyBytes(await handle.fetchHistory()).includes(customer.name)).toBe(true);
  });

  it('a plain-JSON start (a service without the codec) still runs; everything the worker writes is encrypted', async () => {
    const workflowId = `codec-foreign-${randomUUID()}`;
    await rawClient.workflow.start('customerReceipt', { taskQueue: encryptedQueue, workflowId, args: [customer] });
    const secureHandle = secureClient.workflow.getHandle(workflowId);
    expect(await secureHandle.result()).toEqual(expected);

    const history = await rawClient.workflow.getHandle(workflowId).fetchHistory();
    const startInput = eventOf(history, 'workflowExecutionStartedEventAttributes').input!.payloads![0]!;
    expect(text(startInput.metadata?.encoding)).toBe('json/plain'); // as the foreign service wrote it
    const activityInput = eventOf(history, 'activityTaskScheduledEventAttributes').input!.payloads![0]!;
    expect(text(activityInput.metadata?.encoding)).toBe('binary/encrypted');
    const result = eventOf(history, 'workflowExecutionCompletedEventAttributes').result!.payloads![0]!;
    expect(text(result.metadata?.encoding)).toBe('binary/encrypted');
    expect(Buffer.from(result.data!).includes(customer.name)).toBe(false);
  });

  it('rotation: a worker with a newer key still completes histories written under the old one', async () => {
    const env = await getTestEnv();
    const oldOnly = createDataConverter(ring([['k1', k1]]));
    const oldClient = new Client({
      connection: env.connection,
      namespace: env.namespace ?? 'default',
      dataConverter: oldOnly,
    });
    const workflowId = `codec-rotation-${randomUUID()}`;
    await oldClient.workflow.start(customerReceipt, { taskQueue: encryptedQueue, workflowId, args: [customer] });
    const history = await rawClient.workflow.getHandle(workflowId).fetchHistory();
    const startInput = eventOf(history, 'workflowExecutionStartedEventAttributes').input!.payloads![0]!;
    expect(text(startInput.metadata?.['encryption-key-id'])).toBe('k1');
    // The worker (k1 + k2) decodes the k1 input and answers under k2, which the k2-aware client reads.
    expect(await secureClient.workflow.getHandle(workflowId).result()).toEqual(expected);
  });
});

describe('the Temporal CLI through the codec server', () => {
  it('`temporal workflow start --codec-endpoint` encrypts a plain-JSON start; `workflow show` decrypts it', async () => {
    const env = await getTestEnv();
    const token = 'cli-codec-token-0123456789abcdef01234567';
    const codec = encrypted.payloadCodecs![0]!;
    const server = await startCodecServer({ codec, logger: pino({ level: 'silent' }), authToken: token });
    try {
      const { path: temporal } = await resolveTemporalExecutable('temporal', { install: false });
      const workflowId = `codec-cli-${randomUUID()}`;
      const common = [
        '--address',
        inject('temporalAddress'),
        '--namespace',
        env.namespace ?? 'default',
        '--codec-endpoint',
        server.url,
        '--codec-auth',
        `Bearer ${token}`,
      ];
      await execFileAsync(
        temporal,
        [
          'workflow',
          'start',
          ...common,
          '--task-queue',
          encryptedQueue,
          '--type',
          'customerReceipt',
          '--workflow-id',
          workflowId,
          '--input',
          JSON.stringify(customer),
        ],
        { env: cliEnv() },
      );
      expect(await secureClient.workflow.getHandle(workflowId).result()).toEqual(expected);

      const history = await rawClient.workflow.getHandle(workflowId).fetchHistory();
      expect(historyBytes(history).includes(customer.name)).toBe(false);
      const startInput = eventOf(history, 'workflowExecutionStartedEventAttributes').input!.payloads![0]!;
      expect(text(startInput.metadata?.['encryption-key-id'])).toBe('k2');

      const shown = await execFileAsync(
        temporal,
        ['workflow', 'show', ...common, '--workflow-id', workflowId, '--output', 'json'],
        { env: cliEnv() },
      );
      // JSON output keeps payloads in proto-JSON form: decrypted, with base64 `data`.
      const decodedData = [...shown.stdout.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) =>
        Buffer.from(m[1]!, 'base64').toString(),
      );
      expect(decodedData.join('\n')).toContain(customer.name);
      expect(shown.stdout).not.toContain(Buffer.from('binary/encrypted').toString('base64'));

      // A query without arguments: the CLI encodes its empty argument list, `{}` in protobuf JSON, and decodes the answer.
      const queried = await execFileAsync(
        temporal,
        ['workflow', 'query', ...common, '--workflow-id', workflowId, '--name', 'customerName', '--output', 'json'],
        { env: cliEnv() },
      );
      expect(queried.stdout).toContain(customer.name);

      // Without the token the codec server refuses, so the CLI cannot decrypt (it retries until its timeout).
      const refused = execFileAsync(
        temporal,
        [
          'workflow',
          'show',
          '--address',
          inject('temporalAddress'),
          '--namespace',
          env.namespace ?? 'default',
          '--codec-endpoint',
          server.url,
          '--workflow-id',
          workflowId,
          '--output',
          'json',
          '--command-timeout',
          '2s',
        ],
        { env: cliEnv() },
      );
      await expect(refused).rejects.toThrow();
    } finally {
      await server.close();
    }
  }, 60_000);
});

/** The CLI reads TEMPORAL_* variables and a config file; give it only what the test passes as flags. */
function cliEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' };
}
