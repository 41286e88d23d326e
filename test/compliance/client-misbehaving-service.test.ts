import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComplianceClient } from '../../src/compliance/client.js';
import { ApiError, ResponseValidationError } from '../../src/http/errors.js';

/**
 * A service that answers in ways the sandbox never does (broken bodies, a cursor that never ends), served
 * over real HTTP by a stand-in that returns whatever the test sets: the client must refuse to invent a
 * document, and must not loop forever.
 */
let server: Server;
let client: ComplianceClient;
let answer: (url: URL) => unknown;

beforeAll(async () => {
  server = createServer((req, res) => {
    const body = answer(new URL(req.url ?? '/', 'http://stand-in'));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new ComplianceClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'cmp_sk_test_standInServiceKey00000' });
});

afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

const minimalSale = () => ({
  id: 'sale_1',
  type: 'sale',
  status: 'completed',
  traderInvoiceNumber: 'INV-1',
  lines: [],
  totals: { total: 0, taxableAmount: 0, taxAmount: 0 },
});
const minimalItem = () => ({ id: 'item_1', externalId: 'sku-1', name: 'Flour', registrationStatus: 'PENDING' });

describe('a 2xx body that lacks a required field', () => {
  it('is a ResponseValidationError naming the path', async () => {
    const { status: _dropped, ...sale } = minimalSale();
    answer = () => ({ data: { sale } });
    const err = await client.getSale('sale_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect((err as ResponseValidationError).issues.map((i) => i.path)).toEqual(['data.sale.status']);
    expect((err as ResponseValidationError).operation).toBe('getSale');
  });

  it('names a nested path inside a list', async () => {
    answer = () => ({ data: { items: [minimalItem(), { ...minimalItem(), id: undefined }] } });
    const err = await client.listItems().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect((err as ResponseValidationError).issues[0]?.path).toBe('data.items[1].id');
  });

  it('is accepted once the field is present, unknown values and fields included', async () => {
    answer = () => ({ data: { sale: { ...minimalSale(), status: 'brand_new' }, extra: 1 } });
    const { data } = await client.getSale('sale_1');
    expect(data.status).toBe('brand_new');
  });
});

describe('an answer over the size bound', () => {
  it('is not read: the catalogue is refused as a malformed answer, the key nowhere in the error', async () => {
    const longName = 'x'.repeat(1024 * 1024);
    answer = () => ({ data: { items: Array.from({ length: 9 }, () => ({ ...minimalItem(), name: longName })) } });
    const err = await client.listItems().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ operation: 'listItems', status: 200, code: 'invalid_response', retry: 'safe' });
    expect(JSON.stringify(err)).not.toContain('standInServiceKey');
  });
});

describe('pagination', () => {
  it('passes nextCursor back unchanged, byte for byte', async () => {
    const cursors: Array<string | null> = [];
    const opaque = 'a+b/c==&x=1';
    answer = (url) => {
      cursors.push(url.searchParams.get('cursor'));
      const first = !url.searchParams.has('cursor');
      return { data: { purchases: [] }, pagination: { nextCursor: first ? opaque : null, pageSize: 20 } };
    };
    const pages = [];
    for await (const page of client.iteratePurchasePages()) pages.push(page);
    expect(pages).toHaveLength(2);
    expect(cursors).toEqual([null, opaque]);
  });

  it('stops with an error when the service hands back a cursor it already gave', async () => {
    answer = () => ({ data: { purchases: [] }, pagination: { nextCursor: 'same', pageSize: 20 } });
    const walk = async () => {
      for await (const _page of client.iteratePurchasePages()) {
        // walking
      }
    };
    await expect(walk()).rejects.toThrow(/cursor "same" twice/);
  });
});
