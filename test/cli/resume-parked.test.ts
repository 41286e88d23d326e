/**
 * `npm run sales -- resume-parked` and `npm run tenants -- --outages` against the real sale workflow on real workers
 * (the sandbox over HTTP): sales parked by an authority outage past their outageLimit are listed by a dry run that
 * sends nothing, then resumed with --yes once the authority is back, and signed; a sale of the same business parked
 * for another reason is left alone.
 */
import { inject, describe, expect, it } from 'vitest';
import { outageSalesQuery, parkedSalesQuery } from '../../src/client/parked-sales.js';
import { SalesClient } from '../../src/client/sales-client.js';
import { isSigned } from '../../src/contracts/compliance-rules.js';
import { BusinessId, NeedsAttention, AttentionReason } from '../../src/contracts/search-attributes.js';
import type { SaleInput, SaleState } from '../../src/contracts/sale.js';
import { DEMO, eventually, invoiceNumber, saleInput, useSaleHarness } from '../workflows/harness.js';
import { runSalesCli } from '../helpers/run-cli.js';
import { runReadOnlyCli } from './tenants-files.js';

const h = useSaleHarness();

const business = DEMO.businesses.nairobi;
const resumeParked = (...flags: string[]) =>
  runSalesCli(['resume-parked', '--business', business, '--task-queue', h.taskQueue, ...flags]);
/** `npm run tenants -- --outages` over the embedded sandbox (tenant "default": the task queue's count). */
const tenantsOutages = (address: string) =>
  runReadOnlyCli(
    'tenants',
    ['--outages', '--json', '--task-queue', h.taskQueue],
    { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: inject('temporalNamespace') },
    [],
  );

/** Visibility lags the workflows: the count the commands would see, once it is `expected`. */
const visible = (query: string, expected: number) =>
  eventually(
    async () => (await h.client.workflow.count(query)).count,
    (count) => count === expected,
    {
      timeoutMs: 15_000,
      intervalMs: 250,
      what: `${expected} sale(s) visible`,
    },
  );

/** Started as the sales client starts a sale: with the search attributes (BusinessId) the filter finds it by. */
async function start(input: SaleInput) {
  const { workflowId } = await new SalesClient(h.client, { taskQueue: h.taskQueue }).startSale(input);
  return h.client.workflow.getHandle(workflowId);
}

const signed = (state: SaleState) => state.sale !== null && isSigned(state.sale);

interface DryRun {
  dryRun: true;
  found: number;
  sales: Array<{ workflowId: string; parkedSince: string | null; message: string | null; note?: string }>;
}

describe('npm run sales -- resume-parked', () => {
  it(
    'lists the sales an outage parked (a dry run sends nothing), resumes them with --yes, leaves the others alone',
    { timeout: 150_000 },
    async () => {
      // Parked for another reason first: during an authority outage the authority's rules are not consulted.
      const other = await start(saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject) }));
      const otherParked = await h.waitFor(other, (s) => s.parked?.code === 'authority_rejected', 30_000);

      const outage = await h.sandbox.inspector.addOutage({ kind: 'authority' });
      let outageOn = true;
      try {
        const limited = await Promise.all(
          [1, 2].map(() => start(saleInput({ options: { refundWindowDays: 0, outageLimit: '2 seconds' } }))),
        );
        // No limit: it waits the outage out by itself, which is what tenants --outages counts.
        const waiting = await start(saleInput({ options: { refundWindowDays: 0 } }));
        const parked = await Promise.all(
          limited.map((handle) => h.waitFor(handle, (s) => s.parked?.code === 'outage_limit_reached', 40_000)),
        );
        await h.waitFor(waiting, (s) => s.step === 'waiting_out_outage', 20_000);

        await visible(parkedSalesQuery(h.taskQueue, { businessId: business }), 2);
        const dryRun = await resumeParked();
        expect(dryRun.stderr).toBe('');
        expect(dryRun.code).toBe(0);
        const listed = JSON.parse(dryRun.stdout) as DryRun;
        expect(listed).toMatchObject({ dryRun: true, found: 2 });
        expect(listed.sales.map((s) => s.workflowId).sort()).toEqual(limited.map((l) => l.workflowId).sort());
        for (const sale of listed.sales) {
          expect(sale.note).toBeUndefined();
          expect(sale.parkedSince).toEqual(expect.any(String));
          expect(sale.message).toMatch(/^the tax authority has been failing since /);
        }
        for (const [index, handle] of limited.entries()) {
          const now = await h.state(handle);
          expect(now.step).toBe('parked');
          expect(now.history).toHaveLength(parked[index]!.history.length);
        }

        await visible(outageSalesQuery(h.taskQueue), 1);
        const counted = await tenantsOutages(inject('temporalAddress'));
        expect(counted.code).toBe(0);
        expect(JSON.parse(counted.stdout)).toMatchObject({
          compliance: [{ application: 'default', salesWaitingOutOutage: 1 }],
        });

        // A till asking now hears why there is no receipt yet, and that nobody needs to act (exit 4: not signed).
        const { businessId, traderInvoiceNumber } = await h.state(waiting);
        const receipt = await runSalesCli(['receipt', businessId, traderInvoiceNumber, '--wait', '5s']);
        expect(receipt.code).toBe(4);
        expect(JSON.parse(receipt.stdout)).toMatchObject({
          signed: false,
          reason: expect.stringMatching(/^waiting out an outage of the tax authority since .*nobody needs to act$/),
          // The cause is the sale's own failed call, or the gate that kept it from calling a side already known down.
          state: {
            step: 'waiting_out_outage',
            outage: { side: 'authority', cause: expect.stringMatching(/^(authority_unavailable|outage_known)$/) },
          },
        });

        await h.sandbox.inspector.removeOutage(outage.id);
        outageOn = false;
        const resumed = await resumeParked('--yes');
        expect(resumed.stderr).toBe('');
        expect(resumed.code).toBe(0);
        expect(JSON.parse(resumed.stdout)).toMatchObject({
          dryRun: false,
          found: 2,
          resumed: 2,
          refused: 0,
          failed: 0,
        });
        for (const handle of [...limited, waiting]) await h.waitFor(handle, signed, 40_000);
      } finally {
        if (outageOn) await h.sandbox.inspector.removeOutage(outage.id);
      }

      const untouched = await h.state(other);
      expect(untouched.parked).toMatchObject({ code: 'authority_rejected' });
      expect(untouched.history).toEqual(otherParked.history);
      expect(
        (await h.client.workflow.getHandle(other.workflowId).describe()).typedSearchAttributes.get(NeedsAttention),
      ).toBe(true);

      // Listed again while visibility lags, a resumed sale is refused by its own state, which is no failure.
      const again = await resumeParked('--yes');
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ resumed: 0, failed: 0 });
    },
  );

  it("matches a ' inside a business id exactly: it neither breaks nor widens the query", async () => {
    // Search attributes alone (no worker polls this queue): what visibility finds is all this checks.
    const taskQueue = `${h.taskQueue}-quotes`;
    const parkedOf = (workflowId: string, businessId: string) =>
      h.client.workflow.start('saleWorkflow', {
        taskQueue,
        workflowId,
        typedSearchAttributes: [
          { key: BusinessId, value: businessId },
          { key: NeedsAttention, value: true },
          { key: AttentionReason, value: 'outage_limit_reached' },
        ],
      });
    const handles = await Promise.all([
      parkedOf(`quotes-${invoiceNumber()}-a`, "o'brien"),
      parkedOf(`quotes-${invoiceNumber()}-b`, 'o'),
      parkedOf(`quotes-${invoiceNumber()}-c`, "o' OR BusinessId != 'x"),
    ]);
    try {
      await visible(`TaskQueue = '${taskQueue}'`, 3);
      const found = async (businessId: string) =>
        (await new SalesClient(h.client, { taskQueue }).findParkedSales({ businessId })).sales.map((s) => s.workflowId);
      expect(await found("o'brien")).toEqual([handles[0]!.workflowId]);
      expect(await found("o' OR BusinessId != 'x")).toEqual([handles[2]!.workflowId]);
      expect(await found('o')).toEqual([handles[1]!.workflowId]);
    } finally {
      await Promise.all(handles.map((handle) => handle.terminate('test over')));
    }
  });

  it('refuses a filter before connecting: none given, or a value no query can match (exit 2)', async () => {
    const unreachable = { address: '127.0.0.1:1' };
    const none = await runSalesCli(['resume-parked'], unreachable);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('resume-parked needs --business <businessId> or --application <name>');

    const backslash = await runSalesCli(['resume-parked', '--business', 'biz\\x'], unreachable);
    expect(backslash.code).toBe(2);
    expect(backslash.stderr).toContain('invalid parked sales filter: businessId must not contain');

    const edge = await runSalesCli(['resume-parked', '--application', "retail'", '--yes'], unreachable);
    expect(edge.code).toBe(2);
    expect(edge.stderr).toContain("application must not start or end with '");
  });

  it('tenants --outages shows the count as unknown when Temporal cannot be reached, and still exits 0', async () => {
    const result = await tenantsOutages('127.0.0.1:1');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('note: sales waiting out an outage not counted (unknown): cannot connect');
    expect(JSON.parse(result.stdout)).toMatchObject({
      compliance: [{ application: 'default', salesWaitingOutOutage: null }],
    });
  });
});
