/**
 * deploy/grafana/etims-worker.json against the metric catalogue, without a server: every metric the worker publishes
 * is on the dashboard under its scraped name, every name the dashboard reads exists, every selector is scoped to the
 * worker's own series, labels are the catalogue's snake_case ones, counts are exact, units match what a panel shows,
 * every expression parses (promtool check rules), and the count panels read exact counts from synthetic series
 * (promtool test rules). What the expressions return against a live worker is a live test's business (it reads the
 * same queries through test/helpers/dashboard.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { METRICS, initialSeries, type MetricName } from '../../src/metrics/catalogue.js';
import {
  EVENT_COUNT_PANELS,
  OPERATOR_WORK_PANEL,
  dashboardPanels,
  dashboardQueries,
  readDashboard,
  substituteVariables,
  type DashboardQuery,
  type GrafanaVariable,
} from '../helpers/dashboard.js';

const dashboard = readDashboard();
const panels = dashboardPanels(dashboard);
const targets = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel, ...target })));

/** Labels Prometheus adds to every scraped series. */
const SCRAPE_LABELS = ['job', 'instance'];
/** Labels the worker's recorder adds to every etims_* series (src/metrics/recorder.ts). */
const BASE_LABELS = ['namespace', 'task_queue'];

/** The catalogue as scraped: counters get `_total` from the exporter. */
const CATALOGUE = new Map(
  (Object.keys(METRICS) as MetricName[]).map((name) => {
    const spec = METRICS[name];
    return [
      spec.kind === 'counter' ? `${name}_total` : name,
      [...Object.keys(spec.labels), ...BASE_LABELS, ...SCRAPE_LABELS],
    ];
  }),
);

/**
 * The SDK's own metrics the dashboard may read, as the exporter names them with the runtime's options
 * (src/temporal/runtime.ts: `_total` counters, histograms in seconds), with their labels (a live scrape's).
 */
const SDK_BASE = ['namespace', 'task_queue', 'service_name', ...SCRAPE_LABELS];
const SDK_METRICS = new Map<string, string[]>([
  ['temporal_workflow_task_schedule_to_start_latency_seconds_bucket', [...SDK_BASE, 'le']],
  ['temporal_activity_schedule_to_start_latency_seconds_bucket', [...SDK_BASE, 'le']],
  ['temporal_activity_schedule_to_start_latency_seconds_count', SDK_BASE],
  ['temporal_activity_execution_failed_total', [...SDK_BASE, 'activity_type', 'workflow_type']],
  ['temporal_workflow_task_execution_failed_total', [...SDK_BASE, 'workflow_type', 'failure_reason']],
]);

const labelsOf = (metric: string): string[] => CATALOGUE.get(metric) ?? SDK_METRICS.get(metric) ?? [];

// --- A small PromQL reader: enough to find selectors, grouping labels and label_replace's labels.

interface Matcher {
  label: string;
  op: string;
  /** The string literal's content, PromQL escapes kept. */
  value: string;
}
interface Selector {
  metric: string;
  matchers: Matcher[];
}
interface ReadExpr {
  selectors: Selector[];
  /** Labels of by / without / on / ignoring / group_left / group_right lists. */
  grouping: string[];
  /** The destination and source labels of label_replace calls. */
  replaced: string[];
}

const TOKEN =
  /\s+|"(?:[^"\\]|\\.)*"|\{(?:[^}"]|"(?:[^"\\]|\\.)*")*\}|\[[^\]]*\]|[A-Za-z_:][\w:]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?|[(),]|[<>=!+\-*/^%]+/y;
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset']);
const MATCHER = /\s*([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?/y;

function tokens(expr: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(expr);
    if (!match) throw new Error(`cannot read ${JSON.stringify(expr.slice(at))} in ${expr}`);
    if (match[0].trim()) out.push(match[0]);
  }
  return out;
}

function matchers(braces: string): Matcher[] {
  const body = braces.slice(1, -1);
  const out: Matcher[] = [];
  MATCHER.lastIndex = 0;
  while (MATCHER.lastIndex < body.trimEnd().length) {
    const at = MATCHER.lastIndex;
    const match = MATCHER.exec(body);
    if (!match) throw new Error(`cannot read the matchers ${JSON.stringify(body.slice(at))}`);
    out.push({ label: match[1]!, op: match[2]!, value: match[3]! });
  }
  return out;
}

function readExpr(expr: string): ReadExpr {
  const list = tokens(expr);
  const read: ReadExpr = { selectors: [], grouping: [], replaced: [] };
  const isName = (token: string | undefined) => token !== undefined && /^[A-Za-z_:]/.test(token);
  for (let i = 0; i < list.length; i++) {
    const token = list[i]!;
    const next = list[i + 1];
    if (GROUPING.has(token)) {
      if (next !== '(') continue;
      for (i += 2; list[i] !== ')'; i++) if (isName(list[i])) read.grouping.push(list[i]!);
    } else if (token === 'label_replace' && next === '(') {
      // label_replace(v, "dst", "replacement", "src", "regex"): the strings at depth 1 after the first comma.
      let depth = 0;
      let arg = 0;
      for (i += 1; i < list.length; i++) {
        const t = list[i]!;
        if (t === '(') depth++;
        else if (t === ')' && --depth === 0) break;
        else if (t === ',' && depth === 1) arg++;
        else if (depth === 1 && (arg === 1 || arg === 3) && t.startsWith('"')) read.replaced.push(t.slice(1, -1));
      }
    } else if (isName(token) && next !== '(' && !GROUPING.has(next ?? '') && !KEYWORDS.has(token)) {
      // A name before `(` is a function, before `by (` an aggregation: any other is a metric.
      const braces = next?.startsWith('{') ? list[++i] : undefined;
      read.selectors.push({ metric: token, matchers: braces ? matchers(braces) : [] });
    } else if (token.startsWith('{')) {
      read.selectors.push({ metric: '', matchers: matchers(token) });
    }
  }
  return read;
}

const read = targets.map((target) => ({ ...target, read: readExpr(target.expr) }));
const selectors = read.flatMap((target) =>
  target.read.selectors.map((selector) => ({ panel: target.panel.title, ...selector })),
);
const namedMetrics = new Set(selectors.map((s) => s.metric));

const variable = (name: string): GrafanaVariable => {
  const found = dashboard.templating.list.find((v) => v.name === name);
  if (!found) throw new Error(`the dashboard has no variable ${name}`);
  return found;
};
const queryOf = (v: GrafanaVariable) => (typeof v.query === 'string' ? v.query : (v.query?.query ?? ''));

describe('deploy/grafana/etims-worker.json', () => {
  it('shows every metric of the catalogue, under its scraped name (counters with _total)', () => {
    const missing = [...CATALOGUE.keys()].filter((name) => !namedMetrics.has(name));
    expect(missing).toEqual([]);
  });

  it('reads only metrics the catalogue defines or the SDK publishes', () => {
    const unknown = selectors
      .filter((s) => !CATALOGUE.has(s.metric) && !SDK_METRICS.has(s.metric))
      .map((s) => `${s.panel}: ${s.metric || '{…}'}`);
    expect(unknown).toEqual([]);
  });

  it("scopes every selector to the worker's series: the job, the task queue, and the SDK's own service on temporal_*", () => {
    const unscoped: string[] = [];
    const has = (s: Selector, label: string, op: string, value: (v: string) => boolean) =>
      s.matchers.some((m) => m.label === label && m.op === op && value(m.value));
    for (const s of selectors) {
      const where = `${s.panel}: ${s.metric}`;
      if (!has(s, 'job', '=~', (v) => v === '$job')) unscoped.push(`${where} without job=~"$job"`);
      if (s.metric.startsWith('etims_') && !has(s, 'task_queue', '=~', (v) => v === '$task_queue'))
        unscoped.push(`${where} without task_queue=~"$task_queue"`);
      if (s.metric.startsWith('temporal_')) {
        // The dev server's internal workers publish temporal_* too, on temporal_sys_per_ns_tq.
        if (!has(s, 'service_name', '=', (v) => v === 'temporal-core-sdk'))
          unscoped.push(`${where} without service_name="temporal-core-sdk"`);
        if (!has(s, 'task_queue', '=~', (v) => v.includes('$task_queue')))
          unscoped.push(`${where} without a task_queue matcher on $task_queue`);
      }
    }
    expect(unscoped).toEqual([]);
  });

  it("defaults the job to the compose Prometheus' scrape job of the worker, and lists the task queues of that job", () => {
    const config = readFileSync(
      fileURLToPath(new URL('../../deploy/prometheus/prometheus.yml', import.meta.url)),
      'utf8',
    );
    const workerJob = config
      .split(/^\s*- job_name:\s*/m)
      .slice(1)
      // The job that scrapes the compose service `worker` (every replica, by DNS).
      .find((block) => /names: \[["']worker["']\]/.test(block) && block.includes('port: 9464'))
      ?.split(/\s/)[0];
    expect(workerJob).toBe('etims-worker');
    const job = variable('job');
    expect(job.current?.value).toBe(workerJob);
    expect(queryOf(job)).toBe('label_values(etims_sales_signed_total, job)');
    const taskQueue = variable('task_queue');
    expect(queryOf(taskQueue)).toBe('label_values(etims_sales_signed_total{job=~"$job"}, task_queue)');
    expect(taskQueue.includeAll).toBe(true);
  });

  it('uses snake_case labels only, each one a label of a metric the expression reads', () => {
    const wrong: string[] = [];
    const snake = (label: string) => /^[a-z][a-z0-9_]*$/.test(label);
    for (const { panel, expr, legendFormat, read: r } of read) {
      const known = new Set(r.selectors.flatMap((s) => labelsOf(s.metric)));
      for (const s of r.selectors) {
        for (const m of s.matchers)
          if (!labelsOf(s.metric).includes(m.label)) wrong.push(`${panel.title}: ${s.metric} has no label ${m.label}`);
      }
      for (const label of [...r.grouping, ...r.replaced])
        if (!known.has(label)) wrong.push(`${panel.title}: ${label} is not a label of what ${expr} reads`);
      // A legend names the labels the expression keeps: those it groups by (every panel aggregates) or writes.
      for (const [, label] of (legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)) {
        if (!r.grouping.includes(label!) && !r.replaced.includes(label!))
          wrong.push(`${panel.title}: the legend's ${label} is not kept by ${expr}`);
      }
      const labels = [...r.selectors.flatMap((s) => s.matchers.map((m) => m.label)), ...r.grouping, ...r.replaced];
      for (const label of labels) if (!snake(label)) wrong.push(`${panel.title}: label ${label} is not snake_case`);
    }
    for (const v of dashboard.templating.list.filter((v) => v.type === 'query')) {
      const label = /^label_values\((.*),\s*(\w+)\)$/.exec(queryOf(v))?.[2];
      if (!label || !snake(label)) wrong.push(`variable ${v.name}: ${queryOf(v)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('counts events exactly: each count panel rounds the increase of one counter over the dashboard range', () => {
    const stats = new Map(panels.filter((p) => p.type === 'stat').map((p) => [p.title, p]));
    for (const { panel, metric } of EVENT_COUNT_PANELS) {
      const stat = stats.get(panel);
      expect(stat, panel).toBeDefined();
      expect(stat!.targets).toEqual([
        expect.objectContaining({
          instant: true,
          expr: `round(sum(increase(${metric}_total{job=~"$job",task_queue=~"$task_queue"}[$__range])))`,
        }),
      ]);
      expect(stat!.fieldConfig?.defaults?.decimals, panel).toBe(0);
      expect(stat!.description, panel).toMatch(/increase\(\) extrapolates.*rounded/);
    }
    // The list is complete: any other stat panel that counts is missing from it (and from the live test).
    const counting = [...stats.values()]
      .filter((p) => p.targets?.some((t) => t.expr.includes('increase(')))
      .map((p) => p.title);
    expect(counting.sort()).toEqual(EVENT_COUNT_PANELS.map((p) => p.panel).sort());
    // Anything counted over the range is rounded: increase() extrapolates to the window's edges.
    for (const t of targets.filter((t) => t.expr.includes('increase(')))
      expect(t.expr, t.panel.title).toMatch(/^round\(/);

    const waiting = stats.get(OPERATOR_WORK_PANEL.panel);
    // Every worker process publishes the same visibility count: max, never sum.
    expect(waiting?.targets).toEqual([
      expect.objectContaining({
        instant: true,
        expr: `max by (${OPERATOR_WORK_PANEL.by}) (${OPERATOR_WORK_PANEL.metric}{job=~"$job",task_queue=~"$task_queue"})`,
      }),
    ]);
  });

  it('gives each panel the unit of what it shows', () => {
    const wrong: string[] = [];
    for (const { panel, expr } of targets) {
      const unit = panel.fieldConfig?.defaults?.unit;
      const expected = /histogram_quantile|^time\(\) -/.test(expr)
        ? 's'
        : expr.startsWith('100 *')
          ? 'percent'
          : / \* 60( > 0)?$/.test(expr)
            ? 'cpm'
            : undefined;
      if (expected && unit !== expected) wrong.push(`${panel.title}: ${unit} for ${expr}`);
      if (/_seconds_bucket|_seconds\{/.test(expr) && unit !== 's')
        wrong.push(`${panel.title}: seconds shown as ${unit}`);
    }
    expect(wrong).toEqual([]);
  });

  it('has one panel per title, so a query is known by its panel', () => {
    const titles = panels.map((p) => p.title);
    expect(titles.filter((t, i) => titles.indexOf(t) !== i)).toEqual([]);
  });
});

describe('test/helpers/dashboard.ts', () => {
  it("substitutes the dashboard's variables, regex-escaping the job and the task queue", () => {
    const queries = dashboardQueries({ job: 'etims-worker', task_queue: 'sales.eu', range: '15m' });
    expect(queries.length).toBe(targets.length);
    for (const q of queries) expect(q.expr, q.panel).not.toMatch(/\$(?!\d)/);
    const signed = queries.find((q) => q.panel === 'Sales signed');
    expect(signed).toEqual({
      panel: 'Sales signed',
      refId: 'A',
      expr: 'round(sum(increase(etims_sales_signed_total{job=~"etims-worker",task_queue=~"sales\\\\.eu"}[15m])))',
      instant: true,
    });
    expect(
      substituteVariables('rate(x{a=~"${job}"}[$__rate_interval]) $1', {
        job: 'j',
        task_queue: 'q',
        range: '1h',
        rate_interval: '20s',
      }),
    ).toBe('rate(x{a=~"j"}[20s]) $1');
  });
});

describe('with promtool', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dashboard-rules-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const requirePromtool = (context: TestContext) => {
    if (!spawnSync('promtool', ['--version']).error) return;
    if (process.env.CI) throw new Error('promtool is not installed (Debian package prometheus): .ci/run installs it');
    context.skip('promtool is not installed here (Debian package prometheus)');
  };
  const recordName = (q: DashboardQuery) => `dashboard:${q.panel.toLowerCase().replace(/[^a-z0-9]+/g, '_')}:${q.refId}`;
  const promtool = (...args: string[]) => {
    const report = spawnSync('promtool', args, { encoding: 'utf8', cwd: dir });
    return { status: report.status, output: `${report.stdout}${report.stderr}` };
  };

  it('check rules accepts every expression as a recording rule', (context) => {
    requirePromtool(context);
    const rules = dashboardQueries({ job: 'etims-worker', task_queue: 'sales', range: '1d' }).map((q) => ({
      record: recordName(q),
      expr: q.expr,
    }));
    // YAML is a superset of JSON: no YAML library needed, here or for the tests below.
    writeFileSync(
      join(dir, 'dashboard-rules.yml'),
      JSON.stringify({ groups: [{ name: 'dashboard', rules }] }, null, 2),
    );
    const { status, output } = promtool('check', 'rules', 'dashboard-rules.yml');
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(status, output).toBe(0);
  });

  it("test rules: the count panels read exactly the events of the worker's series, the first one included", (context) => {
    requirePromtool(context);
    const queries = dashboardQueries({ job: 'etims-worker', task_queue: 'sales', range: '10m' });
    // 15 s scrapes over 10 minutes, every counter at zero from start-up; one event every minute until it has had its count.
    const steps = 41;
    const counting = (events: number) =>
      Array.from({ length: steps }, (_, step) => Math.min(events, Math.floor(step / 4))).join(' ');
    const climbing = Array.from({ length: steps }, (_, step) => step).join(' ');
    const series = (metric: string, labels: Record<string, string>) =>
      `${metric}{${Object.entries(labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(',')}}`;
    const worker = { job: 'etims-worker', instance: 'worker-1:9464', namespace: 'default', task_queue: 'sales' };
    const inputSeries: Array<{ series: string; values: string }> = [];
    const expected: Array<{ panel: string; value: number }> = [];
    EVENT_COUNT_PANELS.forEach(({ panel, metric }, i) => {
      const events = i + 1;
      const labels = initialSeries(metric, [])[0]!;
      inputSeries.push(
        { series: series(`${metric}_total`, { ...worker, ...labels }), values: counting(events) },
        // Another fleet, and another job's series of the same name: neither may be counted.
        { series: series(`${metric}_total`, { ...worker, ...labels, task_queue: 'another-fleet' }), values: climbing },
        { series: series(`${metric}_total`, { ...worker, ...labels, job: 'another-job' }), values: climbing },
      );
      expected.push({ panel, value: events });
    });
    // Two worker processes publish the same visibility count.
    for (const instance of ['worker-1:9464', 'worker-2:9464']) {
      const labels = { ...worker, instance, [OPERATOR_WORK_PANEL.by]: 'saleWorkflow' };
      inputSeries.push({ series: series(OPERATOR_WORK_PANEL.metric, labels), values: `3x${steps - 1}` });
    }
    const query = (panel: string) => queries.find((q) => q.panel === panel)!.expr;
    // 10 s past the last scrape: increase() extrapolates (1 event reads 1.017), the panel's round() gives the count back.
    const evalTime = '10m10s';
    const tests = {
      rule_files: [],
      evaluation_interval: '15s',
      tests: [
        {
          interval: '15s',
          input_series: inputSeries,
          promql_expr_test: [
            ...expected.map(({ panel, value }) => ({
              expr: query(panel),
              eval_time: evalTime,
              exp_samples: [{ labels: '{}', value }],
            })),
            {
              expr: query(OPERATOR_WORK_PANEL.panel),
              eval_time: evalTime,
              exp_samples: [{ labels: `{${OPERATOR_WORK_PANEL.by}="saleWorkflow"}`, value: 3 }],
            },
          ],
        },
      ],
    };
    writeFileSync(join(dir, 'dashboard-tests.yml'), JSON.stringify(tests, null, 2));
    const { status, output } = promtool('test', 'rules', 'dashboard-tests.yml');
    expect(output).toContain('SUCCESS');
    expect(status, output).toBe(0);
  });
});
