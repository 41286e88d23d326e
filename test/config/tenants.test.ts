/**
 * The tenants a fleet serves, read from a tenants file, a directory of them, or the single-key environment as one
 * tenant. Every refusal names the file and the entry, and never repeats a key: each message below is checked
 * against every secret of the test.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { loadTenantsConfig, readEntries } from '../../src/tenants/load.js';

const root = mkdtempSync(join(tmpdir(), 'tenants-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dirs = 0;
/** A fresh directory holding these files (text as given, objects as JSON). */
function directory(files: Record<string, unknown>): string {
  const dir = join(root, `d${++dirs}`);
  mkdirSync(dir);
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2), {
      mode: 0o600,
    });
  }
  return dir;
}

/** A tenants file named tenants.json in its own directory, beside any other files given. */
function tenantsFile(content: unknown, beside: Record<string, unknown> = {}): string {
  return join(directory({ 'tenants.json': content, ...beside }), 'tenants.json');
}

const inlineKey = 'cmp_sk_test_' + 'InlineMerchantA0001';
const fileKey = 'cmp_sk_live_' + 'FromAFileRetail0002';
const envKey = 'cmp_sk_test_' + 'FromTheEnvDemo00003';
const booksKey = 'sk_development_' + 'BooksAFromEnv000004';
const booksSecret = 'cs_' + 'BooksASecretFile0005';
const booksClientId = 'client_' + 'booksA';
const booksWebhook = 'whsec_' + 'Qm9va3NBV2ViaG9vazAwMDY=';
const wrongKey = 'cmp_sk_prod_' + 'PastedIntoTheWrong07';
const SECRETS = [inlineKey, fileKey, envKey, booksKey, booksSecret, booksWebhook, wrongKey];

const COMPLIANCE_URL = 'https://compliance.example.com';
const ACCOUNTING_URL = 'https://accounting.example.com';
const base = { COMPLIANCE_BASE_URL: COMPLIANCE_URL, ACCOUNTING_BASE_URL: ACCOUNTING_URL };

/** The ConfigError's message, checked to hold none of the test's secrets (nor their distinctive tails). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    for (const secret of SECRETS) {
      expect(message).not.toContain(secret);
      expect(message).not.toContain(secret.slice(-12));
    }
    return message;
  }
  throw new Error('expected a ConfigError');
}

const threeApplications = {
  compliance: [
    {
      application: 'merchant-a',
      apiKey: { value: inlineKey },
      requestsPerMinute: 60,
      businesses: ['biz_a1', 'biz_a2'],
    },
    {
      application: 'retail-group',
      apiKey: { file: 'keys/retail-group' },
      baseUrl: 'https://compliance-eu.example.com',
    },
    { application: 'demo', apiKey: { env: 'DEMO_COMPLIANCE_KEY' } },
  ],
  accounting: [
    {
      application: 'books-a',
      apiKey: { env: 'BOOKS_A_KEY' },
      clientSecret: { file: 'keys/books-a-secret' },
      clientId: { value: booksClientId },
      webhookSecret: { value: booksWebhook },
    },
  ],
  links: [{ business: 'biz_a1', company: 'cmp_1', accounting: 'books-a' }],
};

function threeApplicationsFile(): string {
  const path = tenantsFile(threeApplications);
  const keys = join(path, '..', 'keys');
  mkdirSync(keys);
  // As a mount leaves them: the value and a newline.
  writeFileSync(join(keys, 'retail-group'), `${fileKey}\n`);
  writeFileSync(join(keys, 'books-a-secret'), `${booksSecret}\n`);
  return path;
}

describe('a tenants file', () => {
  it('reads three compliance applications with an inline key, a key file (relative to the tenants file) and an environment variable', () => {
    const path = threeApplicationsFile();
    const config = loadTenantsConfig({
      ...base,
      TENANTS_FILE: path,
      DEMO_COMPLIANCE_KEY: envKey,
      BOOKS_A_KEY: booksKey,
      COMPLIANCE_TIMEOUT_MS: '5000',
    });
    expect(config.origin).toBe(`TENANTS_FILE ${path}`);
    expect(config.compliance).toEqual([
      {
        application: 'merchant-a',
        service: {
          baseUrl: COMPLIANCE_URL,
          apiKey: inlineKey,
          businessId: undefined,
          timeoutMs: 5000,
          allowLoopbackCallbacks: false,
        },
        requestsPerMinute: 60,
        businesses: ['biz_a1', 'biz_a2'],
        source: 'tenants.json: compliance[0] (merchant-a)',
      },
      {
        application: 'retail-group',
        service: {
          baseUrl: 'https://compliance-eu.example.com',
          apiKey: fileKey,
          businessId: undefined,
          timeoutMs: 5000,
          allowLoopbackCallbacks: false,
        },
        requestsPerMinute: 120,
        businesses: undefined,
        source: 'tenants.json: compliance[1] (retail-group)',
      },
      {
        application: 'demo',
        service: {
          baseUrl: COMPLIANCE_URL,
          apiKey: envKey,
          businessId: undefined,
          timeoutMs: 5000,
          allowLoopbackCallbacks: false,
        },
        requestsPerMinute: 120,
        businesses: undefined,
        source: 'tenants.json: compliance[2] (demo)',
      },
    ]);
    expect(config.accounting).toEqual([
      {
        application: 'books-a',
        service: {
          baseUrl: ACCOUNTING_URL,
          apiKey: booksKey,
          clientSecret: booksSecret,
          clientId: booksClientId,
          webhookSecret: booksWebhook,
          signRequests: true,
          signQuery: false,
          timeoutMs: 30_000,
        },
        source: 'tenants.json: accounting[0] (books-a)',
      },
    ]);
    expect(config.links).toEqual([
      { businessId: 'biz_a1', companyId: 'cmp_1', accounting: 'books-a', source: 'tenants.json: links[0] (biz_a1)' },
    ]);
  });

  it('an absolute key file path is read as given', () => {
    const keyPath = join(directory({ key: `${fileKey}\n` }), 'key');
    const path = tenantsFile({ compliance: [{ application: 'abs', apiKey: { file: keyPath } }] });
    expect(loadTenantsConfig({ ...base, TENANTS_FILE: path }).compliance[0]?.service.apiKey).toBe(fileKey);
  });

  it('takes the defaults: 120 requests per minute, every business the key serves, the base URLs and service settings of the environment', () => {
    const path = tenantsFile({
      compliance: [{ application: 'a', apiKey: { value: inlineKey } }],
      accounting: [{ application: 'b', apiKey: { env: 'BOOKS_A_KEY' } }],
    });
    const config = loadTenantsConfig({
      ...base,
      TENANTS_FILE: path,
      BOOKS_A_KEY: booksKey,
      COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
      ACCOUNTING_SIGN_QUERY: 'true',
      ACCOUNTING_TIMEOUT_MS: '7000',
    });
    expect(config.compliance[0]).toMatchObject({
      requestsPerMinute: 120,
      businesses: undefined,
      service: { baseUrl: COMPLIANCE_URL, allowLoopbackCallbacks: true },
    });
    // No client secret: requests are not signed (as with the single-key variables).
    expect(config.accounting[0]?.service).toEqual({
      baseUrl: ACCOUNTING_URL,
      apiKey: booksKey,
      clientSecret: undefined,
      clientId: undefined,
      webhookSecret: undefined,
      signRequests: false,
      signQuery: true,
      timeoutMs: 7000,
    });
    expect(config.links).toEqual([]);
  });

  it('an empty file serves nobody yet (applications are added later)', () => {
    expect(loadTenantsConfig({ TENANTS_FILE: tenantsFile({}) })).toMatchObject({
      compliance: [],
      accounting: [],
      links: [],
    });
  });

  it('readEntries reads parsed documents, so a caller can hold them anywhere', () => {
    const { entries } = readEntries(
      [
        {
          name: 'inline',
          content: { compliance: [{ application: 'x', apiKey: { value: inlineKey } }] },
          baseDir: root,
        },
      ],
      base,
    );
    expect(entries.compliance[0]).toMatchObject({
      application: 'x',
      source: 'inline: compliance[0] (x)',
      service: { apiKey: inlineKey },
    });
  });

  it('an entry may name a single-key variable as its key source', () => {
    const path = tenantsFile({ compliance: [{ application: 'a', apiKey: { env: 'COMPLIANCE_API_KEY' } }] });
    const keyFile = join(directory({ k: `${envKey}\n` }), 'k');
    // COMPLIANCE_API_KEY_FILE counts as the variable, as everywhere else.
    expect(
      loadTenantsConfig({ ...base, TENANTS_FILE: path, COMPLIANCE_API_KEY_FILE: keyFile }).compliance[0]?.service
        .apiKey,
    ).toBe(envKey);
  });
});

describe('a tenants directory', () => {
  it('merges its *.json files in name order, every list concatenated; other files and hidden entries are not read', () => {
    const dir = directory({
      'b.json': {
        compliance: [{ application: 'merchant-b', apiKey: { value: fileKey }, businesses: ['biz_b'] }],
        links: [{ business: 'biz_b', company: 'cmp_b', accounting: 'books-a' }],
      },
      'a.json': {
        compliance: [{ application: 'merchant-a', apiKey: { value: inlineKey }, businesses: ['biz_a'] }],
        accounting: [{ application: 'books-a', apiKey: { value: booksKey } }],
        links: [{ business: 'biz_a', company: 'cmp_a', accounting: 'books-a' }],
      },
      'retail-group-key': inlineKey,
      'README.md': 'not JSON',
      '.hidden.json': '{ not read',
    });
    // What a Kubernetes secret mount looks like: each file a link into a hidden, timestamped directory.
    mkdirSync(join(dir, '..2026_11_23'));
    writeFileSync(
      join(dir, '..2026_11_23', 'c.json'),
      JSON.stringify({ compliance: [{ application: 'merchant-c', apiKey: { value: envKey } }] }),
    );
    symlinkSync('..2026_11_23', join(dir, '..data'));
    symlinkSync(join('..data', 'c.json'), join(dir, 'c.json'));

    const config = loadTenantsConfig({ ...base, TENANTS_DIR: dir });
    expect(config.origin).toBe(`TENANTS_DIR ${dir}`);
    expect(config.compliance.map((t) => [t.application, t.source])).toEqual([
      ['merchant-a', 'a.json: compliance[0] (merchant-a)'],
      ['merchant-b', 'b.json: compliance[0] (merchant-b)'],
      ['merchant-c', 'c.json: compliance[0] (merchant-c)'],
    ]);
    expect(config.accounting.map((t) => t.application)).toEqual(['books-a']);
    expect(config.links.map((l) => [l.businessId, l.companyId, l.accounting, l.source])).toEqual([
      ['biz_a', 'cmp_a', 'books-a', 'a.json: links[0] (biz_a)'],
      // A link may name an accounting application another file declares.
      ['biz_b', 'cmp_b', 'books-a', 'b.json: links[0] (biz_b)'],
    ]);
  });
});

describe('the single-key environment', () => {
  const single = {
    ...base,
    COMPLIANCE_API_KEY: inlineKey,
    COMPLIANCE_BUSINESS_ID: 'biz_1',
    COMPLIANCE_TIMEOUT_MS: '4000',
    COMPLIANCE_REQUESTS_PER_MINUTE: '90',
    ACCOUNTING_API_KEY: booksKey,
    ACCOUNTING_CLIENT_SECRET: booksSecret,
    ACCOUNTING_CLIENT_ID: booksClientId,
    ACCOUNTING_WEBHOOK_SECRET: booksWebhook,
    RECONCILE_LINKS: 'biz_1=cmp_1, biz_2=cmp_2',
  };

  it('is one tenant named default, with the values loadConfig gives', () => {
    const app = loadConfig(single);
    const config = loadTenantsConfig(single);
    expect(config.origin).toBe('environment');
    expect(config.compliance).toEqual([
      {
        application: 'default',
        service: app.compliance,
        requestsPerMinute: 90,
        businesses: ['biz_1'],
        source: 'environment: COMPLIANCE_*',
      },
    ]);
    expect(config.accounting).toEqual([
      { application: 'default', service: app.accounting, source: 'environment: ACCOUNTING_*' },
    ]);
    expect(config.links).toEqual([
      { businessId: 'biz_1', companyId: 'cmp_1', accounting: 'default', source: 'RECONCILE_LINKS' },
      { businessId: 'biz_2', companyId: 'cmp_2', accounting: 'default', source: 'RECONCILE_LINKS' },
    ]);
  });

  it('reads the keys from their _FILE variables, and takes the defaults without COMPLIANCE_BUSINESS_ID or a rate', () => {
    const keys = directory({ c: `${inlineKey}\n`, a: `${booksKey}\n` });
    const env = { ...base, COMPLIANCE_API_KEY_FILE: join(keys, 'c'), ACCOUNTING_API_KEY_FILE: join(keys, 'a') };
    const config = loadTenantsConfig(env);
    expect(config.compliance).toEqual([
      {
        application: 'default',
        service: loadConfig(env).compliance,
        requestsPerMinute: 120,
        businesses: undefined,
        source: 'environment: COMPLIANCE_*',
      },
    ]);
    expect(config.compliance[0]?.service.apiKey).toBe(inlineKey);
    expect(config.accounting[0]?.service.apiKey).toBe(booksKey);
  });

  it('a service not configured has no tenant (the embedded sandbox stands in where SANDBOX=embedded allows it)', () => {
    expect(loadTenantsConfig({})).toEqual({ compliance: [], accounting: [], links: [], origin: 'environment' });
    // RECONCILE_LINKS names the accounting application `default`, whichever serves it.
    expect(loadTenantsConfig({ RECONCILE_LINKS: 'biz_1=cmp_1' }).links).toEqual([
      { businessId: 'biz_1', companyId: 'cmp_1', accounting: 'default', source: 'RECONCILE_LINKS' },
    ]);
  });

  it('refuses what loadConfig, RECONCILE_LINKS and COMPLIANCE_REQUESTS_PER_MINUTE refuse, with their messages', () => {
    const malformed = { ...base, COMPLIANCE_API_KEY: wrongKey };
    expect(refusal(() => loadTenantsConfig(malformed))).toBe(refusal(() => loadConfig(malformed)));
    expect(refusal(() => loadTenantsConfig({ COMPLIANCE_BASE_URL: COMPLIANCE_URL }))).toMatch(
      /^COMPLIANCE_API_KEY is not set/,
    );
    expect(refusal(() => loadTenantsConfig({ RECONCILE_LINKS: 'biz_1=cmp_1,biz_1=cmp_2' }))).toBe(
      'RECONCILE_LINKS: business biz_1 is linked twice',
    );
    expect(refusal(() => loadTenantsConfig({ ...single, COMPLIANCE_REQUESTS_PER_MINUTE: '0' }))).toMatch(
      /^COMPLIANCE_REQUESTS_PER_MINUTE: /,
    );
  });
});

describe('refusals name the setting or the entry, never a key', () => {
  /** The refusal of a tenants file with this content (the keys its entries name by variable are set). */
  function refusalOf(content: unknown, env: Record<string, string> = {}, beside: Record<string, unknown> = {}): string {
    const path = tenantsFile(content, beside);
    return refusal(() =>
      loadTenantsConfig({ ...base, DEMO_COMPLIANCE_KEY: envKey, BOOKS_A_KEY: booksKey, ...env, TENANTS_FILE: path }),
    );
  }

  it('TENANTS_FILE and TENANTS_DIR both set', () => {
    const path = threeApplicationsFile();
    expect(refusal(() => loadTenantsConfig({ TENANTS_FILE: path, TENANTS_DIR: join(path, '..') }))).toBe(
      'TENANTS_FILE and TENANTS_DIR are both set: set one of them',
    );
  });

  it('an unreadable file or directory, or a directory without a tenants file', () => {
    const missing = join(root, 'missing.json');
    expect(refusal(() => loadTenantsConfig({ TENANTS_FILE: missing }))).toBe(
      `TENANTS_FILE: cannot read ${missing} (ENOENT)`,
    );
    expect(refusal(() => loadTenantsConfig({ TENANTS_FILE: root }))).toBe(`TENANTS_FILE: cannot read ${root} (EISDIR)`);
    expect(refusal(() => loadTenantsConfig({ TENANTS_DIR: join(root, 'missing') }))).toBe(
      `TENANTS_DIR: cannot read ${join(root, 'missing')} (ENOENT)`,
    );
    const empty = directory({ 'notes.txt': 'x' });
    expect(refusal(() => loadTenantsConfig({ TENANTS_DIR: empty }))).toBe(`TENANTS_DIR: ${empty} holds no *.json file`);
    if (process.getuid?.() !== 0) {
      const locked = tenantsFile({});
      chmodSync(locked, 0o000);
      expect(refusal(() => loadTenantsConfig({ TENANTS_FILE: locked }))).toBe(
        `TENANTS_FILE: cannot read ${locked} (EACCES)`,
      );
    }
  });

  it('bad JSON, with where, and without the text around it (a key may be there)', () => {
    // V8's own message would quote the text: `Unexpected token 'c', "{ "complia"... is not valid JSON`.
    const text = `{\n  "compliance": [\n    { "application": "a", "apiKey": { "value": ${inlineKey} } }\n  ]\n}\n`;
    expect(refusalOf(text)).toBe('tenants.json: not valid JSON at line 3, column 48');
    expect(refusalOf('{ "compliance": [ ], }')).toBe('tenants.json: not valid JSON at line 1, column 22');
    expect(refusalOf(`{ "compliance": [ { "apiKey": { "value": "${inlineKey}`)).toMatch(
      /^tenants\.json: not valid JSON at line 1, column \d+$/,
    );
    expect(refusalOf('')).toBe('tenants.json: not valid JSON at line 1, column 1');
    expect(refusalOf('[]')).toBe('tenants.json: must be an object with compliance, accounting and links lists');
    expect(refusalOf({ compliance: {} })).toBe('tenants.json: compliance: must be a list');
    expect(refusalOf({ links: [null] })).toBe('tenants.json: links[0]: must be an object, one entry');
  });

  it('an unknown field, at the top and in an entry, named (unless it looks like a key)', () => {
    expect(refusalOf({ compliance: [], complience: [] })).toBe('tenants.json: unknown field "complience"');
    expect(refusalOf({ compliance: [{ application: 'a', apiKey: { value: inlineKey }, requestPerMinute: 10 }] })).toBe(
      'tenants.json: compliance[0] (a): unknown field "requestPerMinute"',
    );
    expect(refusalOf({ compliance: [{ application: 'a', apiKey: { value: inlineKey, file: 'x' } }] })).toBe(
      'tenants.json: compliance[0] (a): apiKey: must be exactly one of {"value": …}, {"file": …} or {"env": …}',
    );
    expect(refusalOf({ links: [{ business: 'b', company: 'c', accounting: 'x', note: 1 }] })).toBe(
      'tenants.json: links[0] (b): unknown field "note"',
    );
    expect(refusalOf({ compliance: [{ application: 'a', apiKey: { value: inlineKey }, [wrongKey]: true }] })).toBe(
      'tenants.json: compliance[0] (a): unknown field (its name is not shown)',
    );
  });

  it('an application declared twice, across the files of a directory, naming both entries', () => {
    const dir = directory({
      'a.json': { compliance: [{ application: 'merchant-a', apiKey: { value: inlineKey } }] },
      'b.json': {
        compliance: [
          { application: 'other', apiKey: { value: envKey } },
          { application: 'merchant-a', apiKey: { value: fileKey } },
        ],
      },
    });
    expect(refusal(() => loadTenantsConfig({ ...base, TENANTS_DIR: dir }))).toBe(
      'b.json: compliance[1] (merchant-a): application merchant-a is already declared by a.json: compliance[0] (merchant-a)',
    );
    // The same name under the other service is another application.
    const both = {
      compliance: [{ application: 'same', apiKey: { value: inlineKey } }],
      accounting: [{ application: 'same', apiKey: { value: booksKey } }],
    };
    expect(loadTenantsConfig({ ...base, TENANTS_FILE: tenantsFile(both) }).accounting[0]?.application).toBe('same');
  });

  it('an application name that is not a name, without repeating it', () => {
    expect(refusalOf({ compliance: [{ application: inlineKey, apiKey: { value: inlineKey } }] })).toBe(
      'tenants.json: compliance[0]: application: must be 1 to 40 lowercase letters, digits or -, starting with a letter or digit',
    );
    expect(refusalOf({ compliance: [{ apiKey: { value: inlineKey } }] })).toBe(
      'tenants.json: compliance[0]: application: is required',
    );
  });

  it('a business under two compliance applications, naming both entries', () => {
    expect(
      refusalOf({
        compliance: [
          { application: 'a', apiKey: { value: inlineKey }, businesses: ['biz_1', 'biz_2'] },
          { application: 'b', apiKey: { value: fileKey }, businesses: ['biz_3', 'biz_2'] },
        ],
      }),
    ).toBe('tenants.json: compliance[1] (b): business biz_2 is already served by tenants.json: compliance[0] (a)');
    expect(
      refusalOf({ compliance: [{ application: 'a', apiKey: { value: inlineKey }, businesses: ['biz_1', 'biz_1'] }] }),
    ).toBe('tenants.json: compliance[0] (a): businesses: biz_1 is listed twice');
  });

  it('a link to an accounting application nobody declares', () => {
    expect(
      refusalOf({
        accounting: [{ application: 'books-a', apiKey: { value: booksKey } }],
        links: [{ business: 'biz_1', company: 'cmp_1', accounting: 'books-b' }],
      }),
    ).toBe('tenants.json: links[0] (biz_1): accounting application books-b is not declared');
  });

  it('a business linked twice, naming both links', () => {
    const dir = directory({
      'a.json': {
        accounting: [{ application: 'books-a', apiKey: { value: booksKey } }],
        links: [{ business: 'biz_1', company: 'cmp_1', accounting: 'books-a' }],
      },
      'b.json': { links: [{ business: 'biz_1', company: 'cmp_2', accounting: 'books-a' }] },
    });
    expect(refusal(() => loadTenantsConfig({ ...base, TENANTS_DIR: dir }))).toBe(
      'b.json: links[0] (biz_1): business biz_1 is already linked by a.json: links[0] (biz_1)',
    );
  });

  it('a key variable that is not set', () => {
    expect(refusalOf({ compliance: [{ application: 'demo', apiKey: { env: 'MERCHANT_X_KEY' } }] })).toBe(
      'tenants.json: compliance[0] (demo): apiKey: environment variable MERCHANT_X_KEY is not set',
    );
    expect(refusalOf({ compliance: [{ application: 'demo', apiKey: { env: 'not a name' } }] })).toBe(
      'tenants.json: compliance[0] (demo): apiKey: env: must be an environment variable name',
    );
  });

  it('a key file that is missing or empty', () => {
    const path = tenantsFile({
      accounting: [{ application: 'books-a', apiKey: { value: booksKey }, clientSecret: { file: 'keys/missing' } }],
    });
    expect(refusal(() => loadTenantsConfig({ ...base, TENANTS_FILE: path }))).toBe(
      `tenants.json: accounting[0] (books-a): clientSecret: cannot read ${join(path, '..', 'keys', 'missing')} (ENOENT)`,
    );
    expect(refusalOf({ compliance: [{ application: 'a', apiKey: { file: 'empty' } }] }, {}, { empty: '\n' })).toBe(
      'tenants.json: compliance[0] (a): apiKey: the file is empty',
    );
  });

  it('a key in the wrong form: malformed, a bare string, a number, in the wrong place', () => {
    expect(refusalOf({ compliance: [{ application: 'retail-group', apiKey: { value: wrongKey } }] })).toBe(
      'tenants.json: compliance[0] (retail-group): apiKey is not in the expected form (cmp_sk_test_… or cmp_sk_live_… followed by at least 16 letters, digits, _ or -); the value is not shown',
    );
    // A key file and a key variable are checked the same way.
    expect(refusalOf({ compliance: [{ application: 'a', apiKey: { file: 'k' } }] }, {}, { k: wrongKey })).toMatch(
      /^tenants\.json: compliance\[0\] \(a\): apiKey is not in the expected form/,
    );
    expect(
      refusalOf({ accounting: [{ application: 'b', apiKey: { env: 'BOOKS_A_KEY' } }] }, { BOOKS_A_KEY: inlineKey }),
    ).toMatch(/^tenants\.json: accounting\[0\] \(b\): apiKey is not in the expected form \(sk_development_…/);
    expect(
      refusalOf({
        accounting: [{ application: 'b', apiKey: { value: booksKey }, clientSecret: { value: booksWebhook } }],
      }),
    ).toMatch(/^tenants\.json: accounting\[0\] \(b\): clientSecret is not in the expected form/);
    expect(refusalOf({ compliance: [{ application: 'a', apiKey: inlineKey }] })).toBe(
      'tenants.json: compliance[0] (a): apiKey: must be exactly one of {"value": …}, {"file": …} or {"env": …}',
    );
    expect(refusalOf({ compliance: [{ application: 'a', apiKey: { value: 123456789012345 } }] })).toBe(
      'tenants.json: compliance[0] (a): apiKey: value: must be a string',
    );
    expect(
      refusalOf({ compliance: [{ application: 'a', apiKey: { value: inlineKey }, requestsPerMinute: fileKey }] }),
    ).toBe('tenants.json: compliance[0] (a): requestsPerMinute: must be a whole number from 1 to 100000');
    expect(
      refusalOf({ compliance: [{ application: 'a', apiKey: { value: inlineKey }, businesses: ['biz_1', 7] }] }),
    ).toBe(
      'tenants.json: compliance[0] (a): businesses[1]: must be a business id (letters, digits, _ . : -), not a key',
    );
    expect(refusalOf({ compliance: [{ application: 'a', apiKey: { value: inlineKey }, businesses: [envKey] }] })).toBe(
      'tenants.json: compliance[0] (a): businesses[0]: must be a business id (letters, digits, _ . : -), not a key',
    );
    expect(refusalOf({ links: [{ business: envKey, company: 'cmp_1', accounting: 'books-a' }] })).toBe(
      'tenants.json: links[0]: business: must be a business id (letters, digits, _ . : -), not a key',
    );
    expect(
      refusalOf({ compliance: [{ application: 'a', apiKey: { value: inlineKey }, baseUrl: `ftp://${envKey}@x` }] }),
    ).toBe('tenants.json: compliance[0] (a): baseUrl: must be an absolute http(s) URL');
  });

  it('other entry refusals: no base URL anywhere, signing without a secret, a bad setting of the environment', () => {
    const path = tenantsFile({ compliance: [{ application: 'a', apiKey: { value: inlineKey } }] });
    expect(refusal(() => loadTenantsConfig({ TENANTS_FILE: path }))).toBe(
      'tenants.json: compliance[0] (a): baseUrl: not set, nor is COMPLIANCE_BASE_URL',
    );
    expect(
      refusalOf(
        { accounting: [{ application: 'b', apiKey: { value: booksKey } }] },
        { ACCOUNTING_SIGN_REQUESTS: 'true' },
      ),
    ).toBe('tenants.json: accounting[0] (b): ACCOUNTING_SIGN_REQUESTS is true but ACCOUNTING_CLIENT_SECRET is not set');
    expect(
      refusalOf(
        { compliance: [{ application: 'a', apiKey: { value: inlineKey } }] },
        { COMPLIANCE_TIMEOUT_MS: 'soon' },
      ),
    ).toMatch(/^tenants\.json: compliance\[0\] \(a\): COMPLIANCE_TIMEOUT_MS: /);
  });

  it('a single-key variable beside a tenants file, unless an entry names it: it would be ignored otherwise', () => {
    const content = { compliance: [{ application: 'a', apiKey: { value: inlineKey } }] };
    expect(refusalOf(content, { COMPLIANCE_API_KEY: envKey })).toBe(
      "COMPLIANCE_API_KEY is set but TENANTS_FILE is: a tenants file names every key, business and link (unset it, or name it as an entry's key source)",
    );
    expect(refusalOf(content, { RECONCILE_LINKS: 'biz_1=cmp_1' })).toMatch(
      /^RECONCILE_LINKS is set but TENANTS_FILE is/,
    );
    expect(refusalOf(content, { COMPLIANCE_REQUESTS_PER_MINUTE: '60' })).toMatch(
      /^COMPLIANCE_REQUESTS_PER_MINUTE is set but TENANTS_FILE is/,
    );
  });
});
