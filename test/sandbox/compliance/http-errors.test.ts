import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { DEMO, errorOf, saleRequest, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

describe('HTTP-level errors, all in the documented shape', () => {
  it('answers an unknown route with 404 not_found, whatever the key', async () => {
    for (const key of [DEMO.keys.nairobi, null]) {
      const answer = await client.call('GET', '/v1/nothing-here', { key });
      expect(answer.status).toBe(404);
      expect(errorOf(answer).code).toBe('not_found');
    }
    expect((await client.call('GET', '/v2/sales/x')).status).toBe(404);
  });

  it('answers invalid JSON with 400 invalid_request naming the body', async () => {
    const answer = await client.call('POST', '/v1/sales', { rawBody: '{"traderInvoiceNumber": ' });
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^body: is not valid JSON/),
    });
  });

  it('answers a body that is not an object with 400', async () => {
    const answer = await client.call('POST', '/v1/sales', { rawBody: '[1,2]' });
    expect(errorOf(answer).message).toBe('body: must be a JSON object');
    expect(errorOf(await client.post('/v1/sales')).message).toBe('body: is required (a JSON object)');
  });

  it('answers a wrong content type with 400 naming Content-Type', async () => {
    const answer = await client.call('POST', '/v1/sales', {
      rawBody: 'traderInvoiceNumber=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).message).toBe('Content-Type: must be application/json');
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const huge = JSON.stringify({ ...saleRequest(), padding: 'x'.repeat(1024 * 1024) });
    const answer = await client.call('POST', '/v1/sales', { rawBody: huge });
    expect(answer.status).toBe(413);
    expect(errorOf(answer).code).toBe('payload_too_large');
  });

  it('takes a JSON content type with an empty body on operations without one', async () => {
    const res = await request(`${sbx.sandbox.complianceUrl}/v1/purchases/pull`, {
      method: 'POST',
      headers: { 'x-api-key': DEMO.keys.nairobi, 'content-type': 'application/json' },
      body: '',
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });

  it('refuses a query parameter given twice', async () => {
    const res = await request(`${sbx.sandbox.complianceUrl}/v1/purchases?pageSize=5&pageSize=6`, {
      headers: { 'x-api-key': DEMO.keys.nairobi },
    });
    expect(res.statusCode).toBe(400);
    expect(((await res.body.json()) as { error: { message: string } }).error.message).toMatch(/^pageSize: /);
  });
});
