/**
 * The Temporal UI's way to a codec server with a token, in a real browser: the UI fetches /decode with
 * `credentials: 'include'` (TEMPORAL_CODEC_INCLUDE_CREDENTIALS) from its own origin; after the operator has opened
 * the codec server's /sign-in once and given the token, the browser presents it, and only then.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec.js';
import { startCodecServer, type CodecServer } from '../../src/codec/server.js';
import { chromiumUnavailable, launchChromium } from '../ui/chromium.js';
import { newKey, ring } from './helpers.js';

const TOKEN = 'browser-sign-in-token-0123456789abcdef01';
let codec: CodecServer;
let ui: Server;
let uiOrigin: string;
let browser: Browser;

beforeAll(async () => {
  // A page on another origin, standing in for the UI.
  ui = createServer((_req, res) =>
    res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>ui</title>'),
  );
  await new Promise<void>((r) => ui.listen(0, '127.0.0.1', r));
  uiOrigin = `http://127.0.0.1:${(ui.address() as AddressInfo).port}`;
  codec = await startCodecServer({
    codec: new AesGcmPayloadCodec(ring([['k1', newKey()]])),
    logger: pino({ level: 'silent' }),
    corsOrigins: [uiOrigin],
    authToken: TOKEN,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await codec?.close();
  await new Promise((r) => ui?.close(r));
});

/** What the UI does: POST /decode from its origin, with the browser's credentials for the codec server. */
async function decodeFromUi(context: Awaited<ReturnType<Browser['createBrowserContext']>>): Promise<number> {
  const page = await context.newPage();
  await page.goto(uiOrigin);
  return page.evaluate(async (url) => {
    const res = await fetch(`${url}/decode`, {
      method: 'POST',
      credentials: 'include',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default' },
      body: JSON.stringify({ payloads: [] }),
    });
    return res.status;
  }, codec.url);
}

describe.skipIf(chromiumUnavailable() !== undefined)('the UI in a browser, through /sign-in', () => {
  it('is refused before the sign-in and decodes after it', async () => {
    const context = await browser.createBrowserContext();
    try {
      expect(await decodeFromUi(context)).toBe(401);

      const signIn = await context.newPage();
      await signIn.authenticate({ username: 'operator', password: TOKEN });
      const answer = await signIn.goto(`${codec.url}/sign-in`);
      expect(answer?.status()).toBe(200);
      await signIn.authenticate(null);

      expect(await decodeFromUi(context)).toBe(200);
    } finally {
      await context.close();
    }
    // Another browser profile has not signed in.
    const other = await browser.createBrowserContext();
    try {
      expect(await decodeFromUi(other)).toBe(401);
    } finally {
      await other.close();
    }
  }, 60_000);
});
