/**
 * The worker's own metrics as Prometheus reads them: published through the Temporal runtime's exporter with the
 * project's options (src/temporal/runtime.ts), every known series at zero from the start, label values bounded.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Runtime } from '@temporalio/worker';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import {
  API_CALL_OUTCOMES,
  CALLBACK_VERDICTS,
  COMPLIANCE_OPERATIONS,
  KNOWN_CODES,
  METRICS,
} from '../../src/metrics/catalogue.js';
import { createMetricsRecorder, type MetricsRecorder } from '../../src/metrics/recorder.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { freePort } from '../../tools/free-port.js';

let metricsUrl: string;
let recorder: MetricsRecorder;
const scrape = async () => (await fetch(metricsUrl)).text();
const sample = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.lastIndexOf('}'));
    const found = Object.fromEntries([...inner.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
};

beforeAll(async () => {
  const port = await freePort();
  installTemporalRuntime(pino({ level: 'silent' }), { metricsBindAddress: `127.0.0.1:${port}` });
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  recorder = createMetricsRecorder(Runtime.instance().metricMeter, { namespace: 'default', taskQueue: 'sales' });
  recorder.knowBusinesses('purchases', ['biz_a']);
});

describe('the metric catalogue', () => {
  it("follows Prometheus' naming conventions", () => {
    for (const [name, spec] of Object.entries(METRICS)) {
      expect(name, name).toMatch(/^etims_[a-z0-9_]+$/);
      // The exporter adds _total to counters; a declared _total would be scraped as _total_total.
      expect(name.endsWith('_total'), name).toBe(false);
      expect(spec.help.length, `${name} has help`).toBeGreaterThan(10);
      for (const label of Object.keys(spec.labels)) expect(label, `${name}{${label}}`).toMatch(/^[a-z][a-z0-9_]*$/);
    }
  });

  it('knows every code the worker itself gives a failure, and every operation of the compliance client', () => {
    for (const type of Object.values(FAILURE_TYPES)) expect(KNOWN_CODES).toContain(type);
    expect(API_CALL_OUTCOMES).toContain('ok');
    const client = readFileSync(new URL('../../src/compliance/client.ts', import.meta.url), 'utf8');
    const used = new Set([...client.matchAll(/operation: '(\w+)'|fileDocument\('(\w+)'/g)].map((m) => m[1] ?? m[2]));
    expect(used.size).toBeGreaterThan(10);
    expect([...used].sort()).toEqual([...COMPLIANCE_OPERATIONS].sort());
  });

  it('knows every code a sale parks with that the workflow names itself', () => {
    const folders = ['sale', 'document'].map((name) => new URL(`../../workflows/${name}/`, import.meta.url));
    const sources = [
      ...folders.flatMap((folder) => readdirSync(folder).map((f) => readFileSync(new URL(f, folder), 'utf8'))),
      readFileSync(new URL('../../workflows/sale.ts', import.meta.url), 'utf8'),
    ].join('\n');
    const codes = new Set<string>();
    for (const m of sources.matchAll(/(?:awaitOperator\(\s*[^,]*?'|record\.park\(\s*'|code: ')([a-z_]+)'/g))
      codes.add(m[1]!);
    expect(codes).toEqual(
      new Set(['receipt_missing', 'authority_failed', 'outcome_timeout', 'item_needs_fixing', 'error']),
    );
    for (const code of codes) expect(KNOWN_CODES, code).toContain(code);
  });

  it('knows every verdict the callback receiver gives', () => {
    const read = (file: string) => readFileSync(new URL(`../../src/callbacks/${file}`, import.meta.url), 'utf8');
    const sources = ['routes.ts', 'server.ts', 'accounting-webhooks.ts'].map(read).join('\n');
    const verdicts = new Set<string>();
    for (const m of sources.matchAll(
      /(?:verdict\(request, |counted\()'(\w+)'|\[\d{3}, '(\w+)'\]|body: \{ status: '(\w+)'/g,
    ))
      verdicts.add(m[1] ?? m[2] ?? m[3]!);
    // The webhooks' table of refusals: `code: [status, message]`.
    for (const m of read('accounting-webhooks.ts').matchAll(/^\s+(\w+): \[\d{3}, /gm)) verdicts.add(m[1]!);
    for (const m of sources.matchAll(/type ErrorCode =([^;]+);/g))
      for (const code of m[1]!.matchAll(/'(\w+)'/g)) verdicts.add(code[1]!);
    expect(verdicts.size).toBeGreaterThan(15);
    for (const verdict of verdicts) expect(CALLBACK_VERDICTS as readonly string[], verdict).toContain(verdict);
  });
});

describe('createMetricsRecorder', () => {
  it('publishes every known counter series at zero before anything happens, with the process labels', async () => {
    const text = await scrape();
    expect(sample(text, 'etims_sales_signed_total', { namespace: 'default', task_queue: 'sales' })).toBe(0);
    expect(sample(text, 'etims_sales_parked_total', { code: 'authority_rejected' })).toBe(0);
    expect(sample(text, 'etims_sales_parked_total', { code: 'other' })).toBe(0);
    expect(sample(text, 'etims_stock_movements_needing_operator_total', { action: 'DEDUCT' })).toBe(0);
    expect(sample(text, 'etims_api_rate_limited_total', { service: 'compliance' })).toBe(0);
    expect(sample(text, 'etims_purchases_syncs_total', { business_id: 'biz_a', outcome: 'succeeded' })).toBe(0);
    // Gauges wait for a measurement: a zero would be a claim.
    expect(text).not.toMatch(/^etims_operator_work_waiting\{/m);
  });

  it("counts a value outside a label's set as other, so no service can mint series", async () => {
    recorder.count('etims_sales_parked', { code: 'Upstream Proxy Said: <html>' });
    recorder.count('etims_api_calls', { service: 'compliance', outcome: 'bad_gateway_from_some_proxy' });
    recorder.count('etims_purchase_events_delivered', { business_id: 'biz_not_configured' }, 3);
    const text = await scrape();
    expect(sample(text, 'etims_sales_parked_total', { code: 'other' })).toBe(1);
    expect(sample(text, 'etims_api_calls_total', { service: 'compliance', outcome: 'other' })).toBe(1);
    expect(sample(text, 'etims_purchase_events_delivered_total', { business_id: 'other' })).toBe(3);
    expect(text).not.toContain('Upstream Proxy');
    expect(text).not.toContain('bad_gateway_from_some_proxy');
    expect(text).not.toContain('biz_not_configured');
  });

  it("starts a business's series at zero for the process that serves it, and only that one", async () => {
    recorder.knowBusinesses('reconciliation', ['biz_b']);
    const text = await scrape();
    expect(sample(text, 'etims_reconciliations_total', { business_id: 'biz_b', outcome: 'succeeded' })).toBe(0);
    // Reconciled, not synced: no purchases series that would read as a sync that stopped succeeding.
    expect(sample(text, 'etims_purchases_syncs_total', { business_id: 'biz_b' })).toBeUndefined();
    expect(sample(text, 'etims_reconciliations_total', { business_id: 'biz_a' })).toBeUndefined();
    recorder.count('etims_reconciliations', { business_id: 'biz_a', outcome: 'succeeded' });
    expect(sample(await scrape(), 'etims_reconciliations_total', { business_id: 'other', outcome: 'succeeded' })).toBe(
      1,
    );
  });

  it('passes promtool check metrics', async (context) => {
    const found = spawnSync('promtool', ['--version']);
    if (found.error) {
      if (process.env.CI) throw new Error('promtool is not installed (Debian package prometheus): .ci/run installs it');
      context.skip('promtool is not installed here (Debian package prometheus)');
    }
    recorder.set('etims_operator_work_waiting', 2, { workflow_type: 'saleWorkflow' });
    recorder.set('etims_sales_awaiting_outage', 3, { side: 'authority' });
    const text = await scrape();
    const report = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${report.stdout}${report.stderr}`.trim()).toBe('');
    expect(report.status).toBe(0);
  });
});
