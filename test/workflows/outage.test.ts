/**
 * Outages end to end: the sandbox's authority or service down, real workers and the application's outage watch.
 * Sales started during the outage wait without a person and without spending the budget, then are signed once each,
 * oldest first. The workflows' own timing over days is in outage-logic.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { getOutageWatchStateQuery, OUTAGE_WATCH_WORKFLOW_TYPE } from '../../src/contracts/outage-watch.js';
import { awaitReceiptUpdate } from '../../src/contracts/sale.js';
import { FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import { eventually } from '../helpers/eventually.js';
import { invoiceNumber, saleInput, searchAttribute, useSaleHarness } from './harness.js';

const h = useSaleHarness();

async function waitingWatch() {
  const watches = h.client.workflow.list({
    query: `WorkflowType = '${OUTAGE_WATCH_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`,
  });
  for await (const watch of watches) {
    const handle = h.client.workflow.getHandle(watch.workflowId);
    const state = await handle.query(getOutageWatchStateQuery).catch(() => undefined);
    if (state && state.waiting.service + state.waiting.authority > 0) return { handle, state };
  }
  return undefined;
}

describe('an outage of the authority', () => {
  it('holds the sales started during it on one watch, probes a few times a minute, then signs each once, oldest first', async () => {
    const outage = await h.sandbox.inspector.addOutage({ kind: 'authority' });
    const tins = Array.from({ length: 6 }, (_, i) => invoiceNumber(`DOWN${i}-`));
    const handles = [];
    for (const tin of tins) {
      handles.push(await h.start(saleInput({ traderInvoiceNumber: tin })));
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const handle of handles) await h.waitFor(handle, (s) => s.step === 'waiting_out_outage', 60_000);
    const watch = await eventually(waitingWatch, (w) => w !== undefined && w.state.waiting.authority === 6, {
      timeoutMs: 30_000,
      what: 'the watch holding all six sales',
    });
    expect(watch!.state.waiting.service).toBe(0);
    expect(await searchAttribute(handles[0]!, FiscalStatus)).toBe('awaiting_authority');
    expect(await searchAttribute(handles[0]!, NeedsAttention)).toBe(false);

    // A till asking now hears at once why it has no receipt.
    const asked = Date.now();
    const answer = await handles[5]!.executeUpdate(awaitReceiptUpdate, { args: [{ wait: '20 seconds' }] });
    expect(answer.signed).toBe(false);
    expect(answer.reason).toContain('tax authority');
    expect(Date.now() - asked).toBeLessThan(5_000);

    // Down for 40 s more: submissions are the watch's probes only, one at a time.
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 40_000));
    const submissionsWhileDown = (await h.sandbox.inspector.requestLog({ since, service: 'compliance' })).filter(
      (r) => r.method === 'POST' && r.path.startsWith('/v1/sales'),
    );
    expect(submissionsWhileDown.length).toBeGreaterThanOrEqual(1);
    expect(submissionsWhileDown.length).toBeLessThanOrEqual(4);

    await h.sandbox.inspector.removeOutage(outage.id);
    const ended = Date.now();
    const states = await Promise.all(handles.map((handle) => handle.result()));
    expect(Date.now() - ended).toBeLessThan(45_000);
    for (const state of states) {
      expect(state.sale?.status).toBe('completed');
      expect(state.history.some((e) => e.event.startsWith('parked'))).toBe(false);
    }
    for (const tin of tins) expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: tin })).toHaveLength(1);
    // Oldest first: receipts were counted out in the order the sales started, but for the probe that got through.
    const counters = states.map((s) => Number(s.sale!.receipt!.totalReceiptCounter));
    const inversions = counters.flatMap((a, i) => counters.slice(i + 1).filter((b) => b < a)).length;
    expect(inversions).toBeLessThanOrEqual(5);
  }, 180_000);
});

describe('an outage of the service', () => {
  it('waits out every route answering 503 and files each sale once it answers', async () => {
    const outage = await h.sandbox.inspector.addOutage({ kind: 'service' });
    const tins = Array.from({ length: 3 }, (_, i) => invoiceNumber(`OFF${i}-`));
    const handles = await Promise.all(tins.map((tin) => h.start(saleInput({ traderInvoiceNumber: tin }))));
    for (const handle of handles) await h.waitFor(handle, (s) => s.outage?.side === 'service', 60_000);
    await h.sandbox.inspector.removeOutage(outage.id);
    const states = await Promise.all(handles.map((handle) => handle.result()));
    for (const state of states) expect(state.sale?.status).toBe('completed');
    for (const tin of tins) expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: tin })).toHaveLength(1);
  }, 180_000);
});
