import { describe, expect, it } from 'vitest';
import { defaultAccountingFixture } from '../../../sandbox/accounting/default-fixture.js';
import { AccountingFixtureSchema, type AccountingFixtureInput } from '../../../sandbox/accounting/fixture.js';

function issues(input: AccountingFixtureInput) {
  const result = AccountingFixtureSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
}

describe('accounting fixture', () => {
  it('parses the default fixture with every payment method and status represented', () => {
    const again = AccountingFixtureSchema.parse(defaultAccountingFixture);
    expect(again).toEqual(defaultAccountingFixture);
    const methods = new Set(defaultAccountingFixture.billPayments.map((b) => b.paymentMethod));
    const statuses = new Set(defaultAccountingFixture.billPayments.map((b) => b.status));
    expect(methods.size).toBe(5);
    expect(statuses.size).toBe(4);
  });

  it('names the field of a bad credential without repeating the value', () => {
    const badKey = 'pk_live_not_an_accounting_key_0001';
    const app = { ...defaultAccountingFixture.applications[0]!, apiKeys: [badKey] };
    const found = issues({ ...defaultAccountingFixture, applications: [app] });
    expect(found[0]?.path).toBe('applications.0.apiKeys.0');
    expect(JSON.stringify(found)).not.toContain(badKey);
  });

  it('checks references between companies, bill payments and sync batches', () => {
    const payment = { ...defaultAccountingFixture.billPayments[0]!, companyId: 'cmp_missing' };
    expect(issues({ ...defaultAccountingFixture, billPayments: [payment] })).toContainEqual({
      path: 'billPayments.0.companyId',
      message: 'unknown company cmp_missing',
    });
    const batch = { id: 'sb_x', companyId: 'cmp_demo_mombasa', billPaymentIds: ['bp_nbo_001'] };
    expect(issues({ ...defaultAccountingFixture, syncBatches: [batch] })).toContainEqual({
      path: 'syncBatches.0.billPaymentIds.0',
      message: 'bill payment bp_nbo_001 is not a bill payment of company cmp_demo_mombasa',
    });
    const twice = [
      { id: 'sb_a', companyId: 'cmp_demo_nairobi', billPaymentIds: ['bp_nbo_001'] },
      {
        id: 'sb_b',
        companyId: 'cmp_demo_nairobi',
        billPaymentIds: ['bp_nbo_001'],
        failures: [{ billPaymentId: 'bp_nbo_002', reason: 'x' }],
      },
    ];
    expect(issues({ ...defaultAccountingFixture, syncBatches: twice })).toEqual(
      expect.arrayContaining([
        { path: 'syncBatches.1.billPaymentIds.0', message: 'bill payment bp_nbo_001 is already in sync batch sb_a' },
        {
          path: 'syncBatches.1.failures.0.billPaymentId',
          message: 'bill payment bp_nbo_002 is not in sync batch sb_b',
        },
      ]),
    );
    const duplicated = [...defaultAccountingFixture.billPayments, defaultAccountingFixture.billPayments[0]!];
    expect(issues({ ...defaultAccountingFixture, billPayments: duplicated })).toContainEqual({
      path: 'billPayments',
      message: 'duplicate id bp_nbo_001',
    });
  });
});
