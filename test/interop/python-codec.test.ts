/**
 * The payload codec a Python caller writes (test/python/sale_codec.py, as docs/starting-sales.md tells it) and ours
 * (src/codec) read each other's bytes: Python encrypts, our codec and our codec server decrypt; our codec encrypts,
 * Python decrypts; both pick the key by its id and refuse what they cannot read. No Temporal server: the payloads
 * alone, so a layout mismatch shows here in seconds rather than as a stuck sale.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec.js';
import { startCodecServer, type CodecServer } from '../../src/codec/server.js';
import { newKey, ring } from '../codec/helpers.js';
import { jsonAnswer, pythonForCaller, runPython } from './python.js';

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}
interface Payloads {
  payloads: JsonPayload[];
}

const customer = {
  name: 'Chebet Jepkosgei-Wanyama',
  pin: 'A055501234Z',
  phone: '+254700111222',
  email: 'chebet@example.co.ke',
};
const older = newKey();
const current = newKey();
const keysEnv = `2026-01:${older.toString('base64')},2026-07:${current.toString('base64')}`;
const ours = new AesGcmPayloadCodec(
  ring([
    ['2026-01', older],
    ['2026-07', current],
  ]),
);
const TOKEN = 'interop-codec-token-0123456789abcdef';

const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
const fromB64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString();

function toJson(payload: Payload): JsonPayload {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) metadata[key] = b64(value);
  return { metadata, data: b64(payload.data ?? new Uint8Array()) };
}

function fromJson(json: JsonPayload): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [key, value] of Object.entries(json.metadata)) metadata[key] = fromB64(value);
  return { metadata, data: fromB64(json.data) };
}

/** A payload as the SDKs' JSON converter writes one, plus the encoding a binary one has. */
const customerPayload = (): Payload => ({
  metadata: { encoding: new TextEncoder().encode('json/plain') },
  data: new TextEncoder().encode(JSON.stringify(customer)),
});
const nullPayload = (): Payload => ({
  metadata: { encoding: new TextEncoder().encode('binary/null') },
  data: new Uint8Array(),
});

async function python(
  operation: 'encode' | 'decode',
  payloads: Payload[],
  env: Record<string, string> = { PAYLOAD_KEYS: keysEnv },
) {
  const run = await runPython('codec_tool.py', [operation], {
    stdin: JSON.stringify({ payloads: payloads.map(toJson) }),
    env,
  });
  return { run, answer: jsonAnswer<Payloads & { error?: string; message?: string }>(run) };
}

let codecServer: CodecServer;
let scratch: string;

beforeAll(async () => {
  await pythonForCaller();
  codecServer = await startCodecServer({ codec: ours, logger: pino({ level: 'silent' }), authToken: TOKEN });
  scratch = await mkdtemp(path.join(os.tmpdir(), 'python-codec-'));
}, 300_000);

afterAll(async () => {
  await codecServer?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the Python caller and our codec read each other', () => {
  it('Python encrypts with the newest key; our codec decrypts to the very payload it was given', async () => {
    const { run, answer } = await python('encode', [customerPayload(), nullPayload()]);
    expect(run.code, run.stderr).toBe(0);
    const encrypted = answer.payloads.map(fromJson);
    for (const payload of encrypted) {
      expect(text(payload.metadata?.encoding)).toBe('binary/encrypted');
      expect(text(payload.metadata?.['encryption-key-id'])).toBe('2026-07');
      expect(text(payload.data).includes(customer.name)).toBe(false);
    }
    const decoded = await ours.decode(encrypted);
    expect(decoded.map((p) => text(p.metadata?.encoding))).toEqual(['json/plain', 'binary/null']);
    expect(JSON.parse(text(decoded[0]!.data))).toEqual(customer);
  });

  it('our codec server decodes what Python encrypted (what the UI and the CLI show)', async () => {
    const { answer } = await python('encode', [customerPayload()]);
    const response = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', Authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(answer),
    });
    expect(response.status).toBe(200);
    const [shown] = ((await response.json()) as Payloads).payloads;
    expect(text(fromB64(shown!.metadata.encoding!))).toBe('json/plain');
    expect(JSON.parse(text(fromB64(shown!.data)))).toEqual(customer);
  });

  it('Python decrypts what our codec encrypted, under either key, and passes plain payloads through', async () => {
    const underCurrent = await ours.encode([customerPayload()]);
    const underOlder = await new AesGcmPayloadCodec(ring([['2026-01', older]])).encode([nullPayload()]);
    const plain = customerPayload();
    const { run, answer } = await python('decode', [...underCurrent, ...underOlder, plain]);
    expect(run.code, run.stderr).toBe(0);
    const [first, second, third] = answer.payloads.map(fromJson);
    expect(text(first!.metadata?.encoding)).toBe('json/plain');
    expect(JSON.parse(text(first!.data))).toEqual(customer);
    expect(text(second!.metadata?.encoding)).toBe('binary/null');
    expect(third).toEqual(plain);
  });

  it('reads the same key configuration as the workers: PAYLOAD_KEY_ID, and a JSON PAYLOAD_KEYS_FILE', async () => {
    const chosen = await python('encode', [customerPayload()], { PAYLOAD_KEYS: keysEnv, PAYLOAD_KEY_ID: '2026-01' });
    expect(text(fromJson(chosen.answer.payloads[0]!).metadata?.['encryption-key-id'])).toBe('2026-01');

    const file = path.join(scratch, 'payload-keys.json');
    await writeFile(file, JSON.stringify({ keys: [{ id: 'file-key', key: b64(current) }] }), { mode: 0o600 });
    const fromFile = await python('encode', [customerPayload()], { PAYLOAD_KEYS_FILE: file });
    const payload = fromJson(fromFile.answer.payloads[0]!);
    expect(text(payload.metadata?.['encryption-key-id'])).toBe('file-key');
    const decoded = await new AesGcmPayloadCodec(ring([['file-key', current]])).decode([payload]);
    expect(JSON.parse(text(decoded[0]!.data))).toEqual(customer);
  });

  it('refuses, naming the key id: Python without the key, and our codec given altered Python bytes', async () => {
    const underCurrent = await ours.encode([customerPayload()]);
    const withoutKey = await python('decode', underCurrent, { PAYLOAD_KEYS: `2026-01:${b64(older)}` });
    expect(withoutKey.run.code).toBe(1);
    expect(withoutKey.answer).toMatchObject({ error: 'PayloadDecryptionError' });
    expect(withoutKey.answer.message).toContain('"2026-07"');

    const { answer } = await python('encode', [customerPayload()]);
    const altered = fromJson(answer.payloads[0]!);
    altered.data![20] = altered.data![20]! ^ 0xff;
    await expect(ours.decode([altered])).rejects.toThrow(/failed authentication with key "2026-07"/);
  });
});
