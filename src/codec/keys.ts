// Payload encryption keys, read from the environment or a file (docs/encryption.md). Errors name the variable and
// the key id (or the entry's position when even the id is unusable), never key material.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { ConfigError, readVariable, type Env } from '../config/env.js';

const PAYLOAD_KEY_BYTES = 32;
/** Key ids are written into every payload's metadata, so they stay short and plain. */
const PAYLOAD_KEY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const PAYLOAD_KEY_ENV = {
  keys: 'PAYLOAD_KEYS',
  keysFile: 'PAYLOAD_KEYS_FILE',
  keyId: 'PAYLOAD_KEY_ID',
  encryption: 'PAYLOAD_ENCRYPTION',
} as const;

export class PayloadKeyConfigError extends ConfigError {
  override readonly name = 'PayloadKeyConfigError';
}

interface PayloadKeyInput {
  id: string;
  key: Uint8Array;
}

/** Printing, logging or JSON-serialising a ring shows only its ids. */
export class PayloadKeyRing {
  readonly #keys = new Map<string, KeyObject>();
  readonly encryptKeyId: string;

  /** `keys` as `decodeKey` checks them; the last is the default encryption key. */
  constructor(keys: readonly PayloadKeyInput[], encryptKeyId?: string, source = 'payload key ring') {
    for (const { id, key } of keys) {
      if (this.#keys.has(id)) throw new PayloadKeyConfigError(`${source}: key id "${id}" is listed twice`);
      // A KeyObject, made once: handing the cipher raw bytes makes it build one on every payload.
      this.#keys.set(id, createSecretKey(Buffer.from(key)));
    }
    const chosen = encryptKeyId ?? keys[keys.length - 1]!.id;
    if (!this.#keys.has(chosen))
      throw new PayloadKeyConfigError(`${source}: the encryption key id "${chosen}" is not among the configured keys`);
    this.encryptKeyId = chosen;
  }

  get ids(): string[] {
    return [...this.#keys.keys()];
  }

  key(id: string): KeyObject | undefined {
    return this.#keys.get(id);
  }

  toJSON(): { encryptKeyId: string; ids: string[] } {
    return { encryptKeyId: this.encryptKeyId, ids: this.ids };
  }

  [inspect.custom](): string {
    const ids = this.ids.map((id) => `'${id}'`).join(', ');
    return `PayloadKeyRing { encryptKeyId: '${this.encryptKeyId}', ids: [${ids}] }`;
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+)$/;

/** `where` says where the key came from ("PAYLOAD_KEYS entry 2"), never what it is. */
function decodeKey(where: string, id: string, text: string): PayloadKeyInput {
  // The id is not printed: a malformed entry may have the key where the id should be.
  if (!PAYLOAD_KEY_ID_PATTERN.test(id))
    throw new PayloadKeyConfigError(`${where}: the key id must match ${PAYLOAD_KEY_ID_PATTERN.source}`);
  const trimmed = text.trim();
  if (!BASE64.test(trimmed)) throw new PayloadKeyConfigError(`${where}: key "${id}" is not base64`);
  const key = Buffer.from(trimmed, 'base64');
  if (key.byteLength !== PAYLOAD_KEY_BYTES)
    throw new PayloadKeyConfigError(
      `${where}: key "${id}" is ${key.byteLength} bytes; AES-256 needs exactly ${PAYLOAD_KEY_BYTES} ` +
        '(generate one with: openssl rand -base64 32)',
    );
  return { id, key };
}

/** `id:base64` entries separated by commas or newlines; blank entries and `#` comment lines are skipped. */
export function parseKeyList(text: string, source: string): PayloadKeyInput[] {
  const entries = text
    .split(/[,\n]/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  return entries.map((entry, index) => {
    const where = `${source} entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon <= 0) throw new PayloadKeyConfigError(`${where} is not in the form <id>:<base64 key>`);
    return decodeKey(where, entry.slice(0, colon).trim(), entry.slice(colon + 1));
  });
}

type FileKeys = { keys: PayloadKeyInput[]; encryptKeyId: string | undefined };

function parseJsonKeys(text: string, source: string): FileKeys {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the error, which may be key material.
    throw new PayloadKeyConfigError(`${source}: not valid JSON`);
  }
  const list: unknown = Array.isArray(parsed) ? parsed : (parsed as { keys?: unknown } | null)?.keys;
  const encryptKeyId: unknown = Array.isArray(parsed) ? undefined : (parsed as { encryptKeyId?: unknown }).encryptKeyId;
  if (!Array.isArray(list))
    throw new PayloadKeyConfigError(`${source}: expected [{"id": …, "key": …}] or {"keys": [...], "encryptKeyId"?: …}`);
  if (encryptKeyId !== undefined && typeof encryptKeyId !== 'string')
    throw new PayloadKeyConfigError(`${source}: encryptKeyId must be a string`);
  const keys = list.map((item: unknown, index) => {
    const where = `${source} entry ${index + 1}`;
    const { id, key } = (item ?? {}) as { id?: unknown; key?: unknown };
    if (typeof id !== 'string' || typeof key !== 'string')
      throw new PayloadKeyConfigError(`${where}: expected {"id": "<id>", "key": "<base64 key>"}`);
    return decodeKey(where, id, key);
  });
  return { keys, encryptKeyId };
}

function readKeysFile(path: string): FileKeys {
  const source = PAYLOAD_KEY_ENV.keysFile;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new PayloadKeyConfigError(`${source}: cannot read ${path} (${code})`);
  }
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) return parseJsonKeys(trimmed, source);
  return { keys: parseKeyList(trimmed, source), encryptKeyId: undefined };
}

export function loadKeyRing(env: Env): PayloadKeyRing | undefined {
  const file = readVariable(env, PAYLOAD_KEY_ENV.keysFile);
  const list = readVariable(env, PAYLOAD_KEY_ENV.keys);
  const explicitId = readVariable(env, PAYLOAD_KEY_ENV.keyId);
  if (file === undefined && list === undefined) {
    if (explicitId !== undefined)
      throw new PayloadKeyConfigError(
        `${PAYLOAD_KEY_ENV.keyId} is set but neither ${PAYLOAD_KEY_ENV.keys} nor ${PAYLOAD_KEY_ENV.keysFile} is`,
      );
    return undefined;
  }
  const fromFile = file === undefined ? { keys: [], encryptKeyId: undefined } : readKeysFile(file);
  const fromEnv = list === undefined ? [] : parseKeyList(list, PAYLOAD_KEY_ENV.keys);
  const keys = [...fromFile.keys, ...fromEnv];
  const sources = [file && PAYLOAD_KEY_ENV.keysFile, list && PAYLOAD_KEY_ENV.keys].filter(Boolean).join(' + ');
  if (keys.length === 0) throw new PayloadKeyConfigError(`${sources}: no keys`);
  if (explicitId !== undefined && !keys.some((k) => k.id === explicitId))
    throw new PayloadKeyConfigError(`${PAYLOAD_KEY_ENV.keyId}: no key with id "${explicitId}" in ${sources}`);
  return new PayloadKeyRing(keys, explicitId ?? fromFile.encryptKeyId, sources);
}

export function requireKeyRing(env: Env): PayloadKeyRing {
  const ring = loadKeyRing(env);
  if (ring === undefined)
    throw new PayloadKeyConfigError(
      `payload encryption needs keys: set ${PAYLOAD_KEY_ENV.keys} (<id>:<base64 32 bytes>, comma-separated, ` +
        `newest last) or ${PAYLOAD_KEY_ENV.keysFile}, or ${PAYLOAD_KEY_ENV.encryption}=off on a local stack`,
    );
  return ring;
}
