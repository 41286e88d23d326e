import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ComplianceFixtureSchema } from '../../../sandbox/compliance/fixture-schema.js';
import { DEMO, defaultComplianceFixture, defaultComplianceFixtureInput } from '../../../sandbox/default-fixture.js';
import { FixtureError, loadFixture, parseFixture } from '../../../sandbox/fixture.js';

const tempDirs: string[] = [];
afterAll(() => Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function fixtureFile(content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sandbox-fixture-'));
  tempDirs.push(dir);
  const path = join(dir, 'fixture.json');
  await writeFile(path, content);
  return path;
}

type Input = typeof defaultComplianceFixtureInput;

const withCompliance = (change: (f: Input) => void) => {
  const compliance = structuredClone(defaultComplianceFixtureInput);
  change(compliance);
  return { compliance };
};

function firstError(input: unknown): FixtureError {
  try {
    parseFixture(input);
  } catch (err) {
    if (err instanceof FixtureError) return err;
    throw err;
  }
  throw new Error('the fixture was accepted');
}

describe('the demo fixture', () => {
  it('is valid and every DEMO constant names something in it', () => {
    const fixture = defaultComplianceFixture;
    const keys = new Set(fixture.apiKeys.map((k) => k.key));
    for (const key of Object.values(DEMO.keys)) expect(keys.has(key)).toBe(true);
    const businesses = new Set(fixture.businesses.map((b) => b.id));
    for (const id of Object.values(DEMO.businesses)) expect(businesses.has(id)).toBe(true);
    const items = new Set(fixture.businesses.flatMap((b) => b.items.map((i) => i.id)));
    for (const id of Object.values(DEMO.items)) expect(items.has(id)).toBe(true);
    const rules = new Set(fixture.authority.rules.map((r) => r.id));
    for (const id of Object.values(DEMO.rules)) expect(rules.has(id)).toBe(true);
  });

  it('uses a live demo key with no long alphanumeric run after the prefix', () => {
    expect(DEMO.keys.live.slice('cmp_sk_live_'.length)).not.toMatch(/[A-Za-z0-9]{12,}/);
  });

  it('defaults every part of a sandbox fixture', () => {
    const fixture = parseFixture({});
    expect(fixture.compliance.businesses).toHaveLength(4);
    expect(fixture.accounting.applications.length).toBeGreaterThan(0);
    expect(fixture.faults).toEqual([]);
  });

  it('applies the documented defaults', () => {
    const minimal = ComplianceFixtureSchema.parse({ applications: [{ id: 'a', name: 'A' }] });
    expect(minimal).toMatchObject({
      rateLimitWindowMs: 60_000,
      idempotencyTtlMs: 86_400_000,
      applications: [{ requestsPerMinute: 120, suspended: false }],
      authority: { defaultOutcome: 'accept', asyncDelayMs: 1500, rules: [] },
      callbacks: { retryScheduleMs: [0, 10_000, 60_000, 300_000, 1_800_000, 7_200_000], timeoutMs: 10_000 },
    });
  });
});

describe('fixture validation names the first wrong field', () => {
  it.each([
    [
      'an unknown application of a key',
      (f: Input) => {
        f.apiKeys![0]!.applicationId = 'app_nope';
      },
      'compliance.apiKeys[0].applicationId',
      'unknown application app_nope',
    ],
    [
      "a key bound to another application's business",
      (f: Input) => {
        f.apiKeys![0]!.businessId = DEMO.businesses.kisumu;
      },
      'compliance.apiKeys[0].businessId',
      'belongs to application',
    ],
    [
      'a stock level of an unknown item',
      (f: Input) => {
        f.businesses![0]!.stock![0]!.itemId = 'itm_ghost';
      },
      'compliance.businesses[0].stock[0].itemId',
      'itm_ghost',
    ],
    [
      "a stock level at another business's branch",
      (f: Input) => {
        f.businesses![0]!.stock![0]!.branchId = DEMO.branches.mombasaNyali;
      },
      'compliance.businesses[0].stock[0].branchId',
      'not a branch',
    ],
    [
      'a duplicate branch id',
      (f: Input) => {
        f.businesses![1]!.branches[0]!.id = DEMO.branches.nairobiCbd;
      },
      'compliance.businesses[1].branches[0].id',
      'duplicate branch id',
    ],
    [
      'a malformed authorityBhfId',
      (f: Input) => {
        f.businesses![0]!.branches[0]!.authorityBhfId = '0';
      },
      'compliance.businesses[0].branches[0].authorityBhfId',
      'two digits',
    ],
    [
      'a business of an unknown application',
      (f: Input) => {
        f.businesses![0]!.applicationId = 'app_x';
      },
      'compliance.businesses[0].applicationId',
      'unknown application',
    ],
    [
      'a rule with a broken regex',
      (f: Input) => {
        f.authority!.rules![0]!.match = { traderInvoiceNumber: '[' };
      },
      'compliance.authority.rules[0].match.traderInvoiceNumber',
      'regular expression',
    ],
    [
      'a registered item that still needs something',
      (f: Input) => {
        f.businesses![0]!.items![0]!.needs = { productType: true, classificationMapping: false };
      },
      'compliance.businesses[0].items[0].needs',
      'REGISTERED',
    ],
  ])('%s', (_what, change, field, reason) => {
    const error = firstError(withCompliance(change));
    expect(error.field).toBe(field);
    expect(error.reason).toContain(reason);
  });

  it('never prints a key value, even a duplicate one', () => {
    const error = firstError(
      withCompliance((f) => {
        f.apiKeys![1]!.key = DEMO.keys.orgWide;
      }),
    );
    expect(error.field).toBe('compliance.apiKeys[1].key');
    expect(error.message).toContain('duplicate API key');
    expect(error.message).not.toContain(DEMO.keys.orgWide);
  });

  it('refuses a key in the wrong form', () => {
    const error = firstError(
      withCompliance((f) => {
        f.apiKeys![0]!.key = 'sk_test_wrong_form_000000000';
      }),
    );
    expect(error.field).toBe('compliance.apiKeys[0].key');
  });

  it('validates the fault rules', () => {
    expect(firstError({ faults: [{ kind: 'error', status: 99 }] }).field).toBe('faults[0].status');
  });
});

describe('loadFixture', () => {
  it('reads a JSON file with only the parts it changes', async () => {
    const path = await fixtureFile(JSON.stringify({ faults: [{ kind: 'latency', delayMs: 5 }] }));
    const fixture = await loadFixture(path);
    expect(fixture.faults).toEqual([{ kind: 'latency', delayMs: 5 }]);
    expect(fixture.compliance.applications.map((a) => a.id)).toContain(DEMO.applications.retail);
  });

  it('names the file and the first wrong field', async () => {
    const path = await fixtureFile(
      JSON.stringify({ compliance: { applications: [{ id: 'a', name: 'A', requestsPerMinute: 0 }] } }),
    );
    await expect(loadFixture(path)).rejects.toThrow(`fixture ${path}: compliance.applications[0].requestsPerMinute: `);
  });

  it('names the file when it is not JSON or cannot be read', async () => {
    const path = await fixtureFile('{ nope');
    await expect(loadFixture(path)).rejects.toThrow(`fixture ${path}: (file): is not valid JSON`);
    await expect(loadFixture(`${path}.missing`)).rejects.toThrow('cannot be read (ENOENT)');
  });
});
