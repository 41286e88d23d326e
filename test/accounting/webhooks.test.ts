import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  WebhookVerificationError,
  signWebhook,
  verifyWebhook,
  webhookHeaders,
  type WebhookFailureReason,
} from '../../src/accounting/webhooks.js';
import { CredentialFormatError } from '../../src/config/credentials.js';

// Published Standard Webhooks test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const AT_VECTOR_TIME = new Date(VECTOR.timestamp * 1000);
const SECRET_BODY = 'YWNjb3VudGluZy1zYW5kYm94LXRlc3Qtd2ViaG9vayE=';
const DEV_SECRET = `whsec_development_${SECRET_BODY}`;
// Built at run time so no committed file holds a string that looks like a production secret.
const PROD_SECRET = ['whsec', 'production', SECRET_BODY].join('_');

function vectorHeaders(overrides: Record<string, string | undefined> = {}) {
  return {
    'webhook-id': VECTOR.id,
    'webhook-timestamp': String(VECTOR.timestamp),
    'webhook-signature': VECTOR.signature,
    ...overrides,
  };
}

function reasonOf(fn: () => unknown): WebhookFailureReason | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
  return undefined;
}

describe('webhook verification (Standard Webhooks, A14)', () => {
  it('reproduces the known-answer vector', () => {
    expect(
      signWebhook({ secret: VECTOR.secret, id: VECTOR.id, timestamp: VECTOR.timestamp, rawBody: VECTOR.body }),
    ).toBe(VECTOR.signature);
    expect(
      verifyWebhook({ secret: VECTOR.secret, headers: vectorHeaders(), rawBody: VECTOR.body, now: AT_VECTOR_TIME }),
    ).toEqual({
      test: 2432232314,
    });
  });

  it('accepts the development and production prefixes, and a Headers object', () => {
    for (const secret of [DEV_SECRET, PROD_SECRET]) {
      const rawBody = JSON.stringify({ type: 'bill_payment.synced', id: 'bp_1' });
      const headers = new Headers(webhookHeaders({ secret, id: 'msg_1', timestamp: VECTOR.timestamp, rawBody }));
      expect(verifyWebhook({ secret, headers, rawBody: Buffer.from(rawBody), now: AT_VECTOR_TIME })).toEqual({
        type: 'bill_payment.synced',
        id: 'bp_1',
      });
    }
    // The prefix is not part of the key: the same key body under another prefix verifies identically.
    const headers = webhookHeaders({ secret: DEV_SECRET, id: 'msg_2', timestamp: VECTOR.timestamp, rawBody: '{}' });
    expect(verifyWebhook({ secret: `whsec_${SECRET_BODY}`, headers, rawBody: '{}', now: AT_VECTOR_TIME })).toEqual({});
  });

  it('reports each missing header', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const call = () =>
        verifyWebhook({
          secret: VECTOR.secret,
          headers: vectorHeaders({ [name]: undefined }),
          rawBody: VECTOR.body,
          now: AT_VECTOR_TIME,
        });
      expect(reasonOf(call)).toBe('missing_headers');
      expect(call).toThrow(name);
    }
  });

  it('refuses a non-numeric timestamp', () => {
    for (const timestamp of ['abc', '1614265330.5', '-1614265330', '']) {
      const reason = reasonOf(() =>
        verifyWebhook({
          secret: VECTOR.secret,
          headers: vectorHeaders({ 'webhook-timestamp': timestamp }),
          rawBody: VECTOR.body,
          now: AT_VECTOR_TIME,
        }),
      );
      expect(reason, timestamp).toBe(timestamp === '' ? 'missing_headers' : 'invalid_timestamp');
    }
  });

  it('accepts 5 minutes of skew either way and refuses 5 minutes and 1 second', () => {
    const at = (offsetSeconds: number) => new Date((VECTOR.timestamp + offsetSeconds) * 1000);
    const verifyAt = (offset: number) => () =>
      verifyWebhook({ secret: VECTOR.secret, headers: vectorHeaders(), rawBody: VECTOR.body, now: at(offset) });
    expect(reasonOf(verifyAt(300))).toBeUndefined();
    expect(reasonOf(verifyAt(-300))).toBeUndefined();
    expect(reasonOf(verifyAt(301))).toBe('timestamp_too_old');
    expect(reasonOf(verifyAt(-301))).toBe('timestamp_too_new');
  });

  it('refuses a truncated, altered or unversioned signature and a changed body', () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['truncated', { 'webhook-signature': VECTOR.signature.slice(0, -6) }, VECTOR.body],
      ['one character changed', { 'webhook-signature': VECTOR.signature.replace('g0hM', 'g0hN') }, VECTOR.body],
      ['no version', { 'webhook-signature': VECTOR.signature.slice(3) }, VECTOR.body],
      ['other version', { 'webhook-signature': VECTOR.signature.replace('v1,', 'v2,') }, VECTOR.body],
      ['body changed', {}, '{"test": 2432232315}'],
      ['id changed', { 'webhook-id': 'msg_other' }, VECTOR.body],
    ];
    for (const [label, headers, rawBody] of cases) {
      expect(
        reasonOf(() =>
          verifyWebhook({ secret: VECTOR.secret, headers: vectorHeaders(headers), rawBody, now: AT_VECTOR_TIME }),
        ),
        label,
      ).toBe('invalid_signature');
    }
  });

  it('accepts a list of signatures when any one matches (key rotation)', () => {
    const stale = signWebhook({ secret: DEV_SECRET, id: VECTOR.id, timestamp: VECTOR.timestamp, rawBody: VECTOR.body });
    const headers = vectorHeaders({ 'webhook-signature': `v1a,unrelated ${stale} ${VECTOR.signature}` });
    expect(verifyWebhook({ secret: VECTOR.secret, headers, rawBody: VECTOR.body, now: AT_VECTOR_TIME })).toEqual({
      test: 2432232314,
    });
    const onlyStale = vectorHeaders({ 'webhook-signature': `${stale} v1,AAAA` });
    expect(
      reasonOf(() =>
        verifyWebhook({ secret: VECTOR.secret, headers: onlyStale, rawBody: VECTOR.body, now: AT_VECTOR_TIME }),
      ),
    ).toBe('invalid_signature');
  });

  it('reports a signed body that is not JSON', () => {
    const rawBody = 'not json';
    const headers = webhookHeaders({ secret: VECTOR.secret, id: 'msg_3', timestamp: VECTOR.timestamp, rawBody });
    expect(reasonOf(() => verifyWebhook({ secret: VECTOR.secret, headers, rawBody, now: AT_VECTOR_TIME }))).toBe(
      'invalid_payload',
    );
  });

  it('interoperates with the Standard Webhooks reference library both ways', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const rawBody = JSON.stringify({ type: 'bill_payment.sync_status_changed', data: { note: 'Ngong’ Rd, naïve €' } });
    const reference = new Webhook(VECTOR.secret);
    const ours = webhookHeaders({ secret: VECTOR.secret, id: 'msg_4', timestamp, rawBody });
    expect(reference.verify(rawBody, ours)).toEqual(JSON.parse(rawBody));
    const theirs = {
      'webhook-id': 'msg_5',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': reference.sign('msg_5', new Date(timestamp * 1000), rawBody),
    };
    expect(verifyWebhook({ secret: VECTOR.secret, headers: theirs, rawBody: Buffer.from(rawBody) })).toEqual(
      JSON.parse(rawBody),
    );
  });

  it('refuses a timestamp with leading zeros (the signed content is the number)', () => {
    const headers = vectorHeaders({ 'webhook-timestamp': `0${VECTOR.timestamp}` });
    expect(
      reasonOf(() => verifyWebhook({ secret: VECTOR.secret, headers, rawBody: VECTOR.body, now: AT_VECTOR_TIME })),
    ).toBe('invalid_timestamp');
  });

  it('never accepts a body that is not UTF-8', () => {
    const rawBody = Buffer.concat([Buffer.from('{"note":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const headers = webhookHeaders({ secret: VECTOR.secret, id: 'msg_6', timestamp: VECTOR.timestamp, rawBody });
    expect(reasonOf(() => verifyWebhook({ secret: VECTOR.secret, headers, rawBody, now: AT_VECTOR_TIME }))).toBe(
      'invalid_payload',
    );
  });

  it('refuses a malformed secret without showing it', () => {
    const secret = 'whsec_short!';
    let error: unknown;
    try {
      verifyWebhook({ secret, headers: vectorHeaders(), rawBody: VECTOR.body, now: AT_VECTOR_TIME });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CredentialFormatError);
    expect(String((error as Error).message)).not.toContain(secret);
    expect(String((error as Error).message)).toContain('ACCOUNTING_WEBHOOK_SECRET');
  });
});
