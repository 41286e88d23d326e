import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountingClient } from '../../src/accounting/client.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { ReconciliationInputError, loadReconciliationData } from '../../src/reconciliation/load.js';
import { reconciliationPeriod } from '../../src/reconciliation/rules.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_RECONCILIATION_LINK,
  defaultAccountingFixture,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { fastFixture } from '../helpers/fast-fixture.js';

/** More than two pages of each: 45 + 200 purchases, 25 + 180 bill payments in the linked company. */
const EXTRA_PURCHASES = 200;
const EXTRA_PAYMENTS = 180;

let sandbox: Sandbox;
let compliance: ComplianceClient;
let accounting: AccountingClient;

beforeAll(async () => {
  const complianceFixture = fastFixture((f) => {
    const business = f.businesses?.find((b) => b.id === DEMO.businesses.nairobi);
    const template = business?.purchases?.[0];
    if (!business || !template) throw new Error('the demo world has no Nairobi purchases');
    business.purchases = [
      ...(business.purchases ?? []),
      ...Array.from({ length: EXTRA_PURCHASES }, (_, i) => ({
        ...template,
        id: `pur_load_${i}`,
        supplierInvoiceNumber: `LOAD-${i}`,
        pendingPull: false,
      })),
    ];
  }, 'sandbox');
  const accountingFixture = structuredClone(defaultAccountingFixture);
  const template = accountingFixture.billPayments.find((b) => b.companyId === DEMO_RECONCILIATION_LINK.companyId)!;
  accountingFixture.billPayments.push(
    ...Array.from({ length: EXTRA_PAYMENTS }, (_, i) => ({
      ...template,
      id: `bp_load_${i}`,
      createdAt: new Date(Date.parse('2025-08-01T00:00:00Z') + i * 60_000).toISOString(),
    })),
  );
  sandbox = await startSandbox({ fixture: { compliance: complianceFixture, accounting: accountingFixture } });
  compliance = new ComplianceClient({ baseUrl: sandbox.complianceUrl, apiKey: DEMO.keys.orgWide });
  accounting = new AccountingClient({ baseUrl: sandbox.accountingUrl, apiKey: DEMO_ACCOUNTING_API_KEY });
});

afterAll(async () => {
  await compliance?.close();
  await accounting?.close();
  await sandbox?.close();
});

describe('loadReconciliationData', () => {
  it('reads every purchase and bill payment once, 100 a page, in exactly the calls it needs', async () => {
    const before = sandbox.stats.snapshot().total;
    const data = await loadReconciliationData({ compliance, accounting }, DEMO_RECONCILIATION_LINK);
    expect(new Set(data.purchases.map((p) => p.id)).size).toBe(45 + EXTRA_PURCHASES);
    expect(data.purchases).toHaveLength(45 + EXTRA_PURCHASES);
    expect(new Set(data.billPayments.map((b) => b.id)).size).toBe(25 + EXTRA_PAYMENTS);
    expect(data.billPayments).toHaveLength(25 + EXTRA_PAYMENTS);
    // Businesses and companies once each, three pages of each list.
    expect(sandbox.stats.snapshot().total - before).toBe(8);
  });

  it('skips the access check when asked', async () => {
    const before = sandbox.stats.snapshot().total;
    await loadReconciliationData({ compliance, accounting }, { ...DEMO_RECONCILIATION_LINK, checkAccess: false });
    expect(sandbox.stats.snapshot().total - before).toBe(6);
  });

  it('stops with a clear error past the page bound', async () => {
    const error = await loadReconciliationData(
      { compliance, accounting },
      { ...DEMO_RECONCILIATION_LINK, maxPages: 2 },
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ReconciliationInputError);
    expect((error as Error).message).toBe(
      `business ${DEMO.businesses.nairobi}'s purchase list has more than 2 pages of 100; reconcile a shorter ` +
        'period (RECONCILE_PERIOD_DAYS, --period-days) or raise maxPages',
    );
  });

  it('reads the invoices of a period, and the payments newest first until a page is older than it needs', async () => {
    const all = await loadReconciliationData({ compliance, accounting }, DEMO_RECONCILIATION_LINK);
    const period = reconciliationPeriod('2025-07-31'); // invoices from 2025-05-03, payments from 2025-04-03
    const before = sandbox.stats.snapshot().total;
    const data = await loadReconciliationData({ compliance, accounting }, { ...DEMO_RECONCILIATION_LINK, period });
    const ids = (records: ReadonlyArray<{ id: string }>) => records.map((r) => r.id).sort();
    expect(ids(data.purchases)).toEqual(
      ids(all.purchases.filter((p) => p.invoiceDate >= period.from && p.invoiceDate <= period.to)),
    );
    // Every payment that can pair with the period was read; the 180 copies of an older one mostly were not.
    const wanted = all.billPayments.filter((b) => b.date >= period.paymentsFrom && b.date <= period.to);
    expect(wanted.length).toBeGreaterThan(0);
    expect(ids(data.billPayments)).toEqual(expect.arrayContaining(ids(wanted)));
    expect(data.billPayments.length).toBeLessThan(all.billPayments.length);
    const dates = data.billPayments.map((b) => b.date);
    expect(dates).toEqual(dates.toSorted().reverse());
    // Businesses and companies, three pages of the period's invoices (240), two pages of payments: the second
    // is all older than 2025-04-03 and ends the list.
    expect(sandbox.stats.snapshot().total - before).toBe(2 + 3 + 2);
  });
});
