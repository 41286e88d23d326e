import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountingClient, type AccountingClientOptions } from '../../src/accounting/client.js';
import { CredentialFormatError } from '../../src/config/credentials.js';
import { DEMO_ACCOUNTING_API_KEY, DEMO_ACCOUNTING_CLIENT_SECRET } from '../../sandbox/accounting/default-fixture.js';
import { startAccountingSandbox, type RunningAccountingSandbox } from '../sandbox/accounting/start-accounting.js';

let sandbox: RunningAccountingSandbox;
const clients: AccountingClient[] = [];

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await sandbox.close();
});

function clientWith(options: Partial<AccountingClientOptions>): AccountingClient {
  const client = new AccountingClient({ baseUrl: sandbox.url, apiKey: DEMO_ACCOUNTING_API_KEY, ...options });
  clients.push(client);
  return client;
}

function constructionError(options: Partial<AccountingClientOptions>): unknown {
  try {
    clientWith(options);
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('AccountingClient configuration', () => {
  it('refuses malformed credentials without printing them', () => {
    // Built at run time so no committed file holds a string shaped like a production key.
    const productionLooking = ['sk', 'production', 'Zx9Qw8Er7Ty6'].join('_') + '!';
    const cases: Array<[Partial<AccountingClientOptions>, string, string]> = [
      [{ apiKey: productionLooking }, 'ACCOUNTING_API_KEY', productionLooking],
      [{ apiKey: 'cmp_sk_test_0123456789abcdef0123' }, 'ACCOUNTING_API_KEY', 'cmp_sk_test_0123456789abcdef0123'],
      [
        { clientSecret: 'secret-without-prefix-0123456789' },
        'ACCOUNTING_CLIENT_SECRET',
        'secret-without-prefix-0123456789',
      ],
      [{ clientSecret: 'cs_short' }, 'ACCOUNTING_CLIENT_SECRET', 'cs_short'],
    ];
    for (const [options, setting, value] of cases) {
      const error = constructionError(options);
      expect(error, setting).toBeInstanceOf(CredentialFormatError);
      expect((error as Error).message).toContain(setting);
      expect((error as Error).message).not.toContain(value);
      expect(JSON.stringify(error)).not.toContain(value);
    }
  });

  it('refuses signing without a client secret', () => {
    expect(constructionError({ signRequests: true })).toMatchObject({
      message: expect.stringContaining('ACCOUNTING_CLIENT_SECRET'),
    });
  });

  it('signs by default when a client secret is given, and not when told otherwise', async () => {
    const wrongSecret = 'cs_well_formed_but_wrong_000000001';
    await expect(clientWith({ clientSecret: wrongSecret }).listCompanies()).rejects.toMatchObject({ status: 401 });
    expect((await clientWith({ clientSecret: wrongSecret, signRequests: false }).listCompanies()).meta.status).toBe(
      200,
    );
    expect((await clientWith({ clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET }).listCompanies()).meta.status).toBe(200);
  });

  it('takes a fresh timestamp for every call', async () => {
    const T = 1_750_000_000_000;
    sandbox.clock.now = T;
    try {
      const readings = [T, T + 6 * 60 * 1000];
      const client = clientWith({
        clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
        now: () => readings.shift() ?? Number.NaN,
      });
      expect((await client.listBillPayments({ limit: 1 })).meta.status).toBe(200);
      // The second call's clock reading is 6 minutes on: had the first timestamp been reused it would pass.
      await expect(client.listBillPayments({ limit: 1 })).rejects.toMatchObject({
        status: 401,
        message: expect.stringMatching(/5 minutes/),
      });
    } finally {
      sandbox.clock.now = undefined;
    }
  });

  it('works under a base URL with a path prefix only as far as the sandbox serves it', async () => {
    // The signed path is the path on the wire, prefix included; the sandbox serves no prefix, so 404.
    const prefixed = new AccountingClient({
      baseUrl: `${sandbox.url}/api`,
      apiKey: DEMO_ACCOUNTING_API_KEY,
      clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
    });
    clients.push(prefixed);
    await expect(prefixed.listCompanies()).rejects.toMatchObject({ status: 404 });
  });
});
