/**
 * deploy/prometheus/rules.yml, without a server: promtool accepts the compose Prometheus' configuration and the
 * rules, and runs their unit tests (deploy/prometheus/rules.test.yml: every alert fires on its cause, with its
 * labels and annotations, and stays quiet otherwise). Every series, label and label value the rules name exists in
 * the metric catalogue under its scraped name, so a rename cannot leave a rule silently matching nothing.
 *
 * Needs `promtool` (Debian's `prometheus` package): CI fails without it; elsewhere those tests are skipped, saying why.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, type TestContext } from 'vitest';
import { METRICS, OTHER, type MetricName } from '../../src/metrics/catalogue.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = 'deploy/prometheus/prometheus.yml';
const RULES = 'deploy/prometheus/rules.yml';
const RULE_TESTS = 'deploy/prometheus/rules.test.yml';

const rulesText = readFileSync(`${root}/${RULES}`, 'utf8');
const testsText = readFileSync(`${root}/${RULE_TESTS}`, 'utf8');

/** Labels every etims_* series carries (the recorder's), and those Prometheus adds to a scraped series. */
const COMMON_LABELS = ['namespace', 'task_queue', 'instance', 'job'];

/** The catalogue as scraped (counters with `_total`), each metric with the values its labels may take. */
const SCRAPED = new Map(
  (Object.keys(METRICS) as MetricName[]).map((name) => {
    const spec = METRICS[name];
    const labels = new Map<string, readonly string[] | undefined>(
      Object.entries(spec.labels).map(([label, set]) => [
        label,
        Array.isArray(set) ? [...(set as readonly string[]), OTHER] : undefined,
      ]),
    );
    return [spec.kind === 'counter' ? `${name}_total` : name, labels] as const;
  }),
);

/** `etims_…` names standing alone: not part of a recorded series' `level:metric:operation` name. */
const metricNames = (text: string) => [...text.matchAll(/(?<![\w:])etims_[a-z0-9_]+(?![\w:])/g)].map((m) => m[0]);

/** The rules one by one (alert or recording rule, annotations included, comments left out). */
const ruleChunks = rulesText
  .replace(/^\s*#.*\n/gm, '')
  .split(/^(?=\s+- (?:alert|record): )/m)
  .slice(1);

function promtoolMissing(): string | undefined {
  const found = spawnSync('promtool', ['--version']);
  return found.error ? 'promtool is not installed (Debian package prometheus)' : undefined;
}

function needPromtool(context: TestContext): void {
  const missing = promtoolMissing();
  if (!missing) return;
  if (process.env.CI) throw new Error(`${missing}; CI is set, so this fails instead of skipping: .ci/run installs it`);
  context.skip(missing);
}

function promtool(args: string[]): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { cwd: root, encoding: 'utf8', timeout: 110_000 });
  return {
    status: run.status,
    output: `$ promtool ${args.join(' ')}\n${run.stdout}${run.stderr}${run.error ? String(run.error) : ''}`,
  };
}

describe('the alert rules with promtool', () => {
  it('accepts the configuration the compose Prometheus runs, with its rule file', (context) => {
    needPromtool(context);
    const { status, output } = promtool(['check', 'config', CONFIG]);
    expect(status, output).toBe(0);
    // The config names the rules relative to itself, so the same file works mounted in compose and here.
    expect(output, output).toContain('1 rule files found');
  });

  it('accepts the rules', (context) => {
    needPromtool(context);
    const { status, output } = promtool(['check', 'rules', RULES]);
    expect(status, output).toBe(0);
  });

  it('passes the rules unit tests', { timeout: 120_000 }, (context) => {
    needPromtool(context);
    const { status, output } = promtool(['test', 'rules', RULE_TESTS]);
    expect(status, output).toBe(0);
  });
});

describe('the alert rules against the metric catalogue', () => {
  const alerts = [...rulesText.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]!);

  it('name only series the worker publishes, by their scraped names', () => {
    const named = new Set([...metricNames(rulesText), ...metricNames(testsText)]);
    expect(named.size).toBeGreaterThan(10);
    for (const name of named)
      expect([...SCRAPED.keys()], `${name} (named in ${RULES} or ${RULE_TESTS})`).toContain(name);
    // Every event an operator must hear about has an alert reading it.
    for (const name of [
      'etims_sales_failed_total',
      'etims_sales_parked_total',
      'etims_operator_work_waiting',
      'etims_sales_awaiting_outage',
      'etims_api_rate_limited_total',
    ]) {
      expect(named, name).toContain(name);
    }
  });

  it('match only labels and values those series have', () => {
    for (const m of rulesText.matchAll(/(?<![\w:])(etims_[a-z0-9_]+)\{([^}]*)\}/g)) {
      const labels = SCRAPED.get(m[1]!);
      for (const matcher of m[2]!.matchAll(/(\w+)\s*(=~|!=|!~|=)\s*"([^"]*)"/g)) {
        const [, label, op, value] = matcher;
        const where = `${m[0]} in ${RULES}`;
        expect(
          COMMON_LABELS.includes(label!) || labels?.has(label!),
          `${where}: ${label} is not a label of ${m[1]}`,
        ).toBe(true);
        const values = labels?.get(label!);
        if (values && op === '=') expect(values, `${where}: ${value} is not a value of ${label}`).toContain(value);
      }
    }
  });

  it('group and match only by labels of the series each rule reads', () => {
    expect(ruleChunks.length).toBeGreaterThan(alerts.length);
    for (const chunk of ruleChunks) {
      const title = /- (?:alert|record): (\S+)/.exec(chunk)![1]!;
      const known = new Set(COMMON_LABELS);
      for (const name of metricNames(chunk)) for (const label of SCRAPED.get(name)?.keys() ?? []) known.add(label);
      for (const m of chunk.matchAll(/\b(?:by|on|without|ignoring)\s*\(([^)]*)\)/g)) {
        for (const label of m[1]!
          .split(',')
          .map((l) => l.trim())
          .filter((l) => l !== '')) {
          expect(known, `${title}: ${m[0]} (labels of its series: ${[...known].join(', ')})`).toContain(label);
        }
      }
    }
  });

  it('read only recorded series the file records', () => {
    const recorded = new Set([...rulesText.matchAll(/^\s+- record: (\S+)$/gm)].map((m) => m[1]!));
    const used = new Set([...rulesText.matchAll(/\b[a-z_]+:[a-z0-9_]+:[a-z0-9_]+\b/g)].map((m) => m[0]));
    expect(used.size).toBeGreaterThan(0);
    for (const name of used) expect(recorded, name).toContain(name);
  });

  it('each alert has a severity, a summary, a description and a runbook', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    for (const chunk of ruleChunks.filter((c) => /- alert: /.test(c))) {
      const title = /- alert: (\S+)/.exec(chunk)![1]!;
      expect(chunk, title).toMatch(/^\s+severity: (page|ticket)$/m);
      for (const annotation of ['summary', 'description', 'runbook'])
        expect(chunk, `${title}: ${annotation}`).toMatch(new RegExp(`^\\s+${annotation}: \\S`, 'm'));
    }
  });

  it('each alert is unit-tested both firing on its cause and quiet without it', () => {
    const cases = [...testsText.matchAll(/- eval_time: \S+\n\s+alertname: (\w+)\n\s+exp_alerts:( \[\])?/g)].map(
      (m) => ({ alert: m[1]!, fires: m[2] === undefined }),
    );
    for (const alert of alerts) {
      expect(
        cases.some((c) => c.alert === alert && c.fires),
        `${alert} fires in ${RULE_TESTS}`,
      ).toBe(true);
      expect(
        cases.some((c) => c.alert === alert && !c.fires),
        `${alert} stays quiet in ${RULE_TESTS}`,
      ).toBe(true);
    }
  });
});
