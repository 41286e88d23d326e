/**
 * The Grafana dashboard (deploy/grafana/etims-worker.json) as queries Prometheus can answer: every target with the
 * dashboard's variables substituted as Grafana substitutes them, so a test can send each to Prometheus' HTTP API and
 * compare what an operator would read with what happened. Also names the panels whose value is a count of events,
 * with the catalogue metric each counts, so that comparison needs no knowledge of the dashboard's layout.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CounterName, GaugeName } from '../../src/metrics/catalogue.js';

export const DASHBOARD_PATH = fileURLToPath(new URL('../../deploy/grafana/etims-worker.json', import.meta.url));

export interface GrafanaTarget {
  refId: string;
  expr: string;
  legendFormat?: string;
  instant?: boolean;
}

export interface GrafanaPanel {
  id?: number;
  type: string;
  title: string;
  description?: string;
  targets?: GrafanaTarget[];
  /** A collapsed row keeps its panels here. */
  panels?: GrafanaPanel[];
  fieldConfig?: { defaults?: { unit?: string; decimals?: number } };
}

export interface GrafanaVariable {
  name: string;
  type: string;
  query?: string | { query: string };
  current?: { value?: string | string[] };
  multi?: boolean;
  includeAll?: boolean;
  allValue?: string;
}

export interface Dashboard {
  title: string;
  panels: GrafanaPanel[];
  templating: { list: GrafanaVariable[] };
}

/** Values of the dashboard's variables, by the variables' names (`$__range` is `range`, `$__rate_interval` `rate_interval`). */
export interface DashboardVariables {
  /** The scrape job of the worker (compose: `etims-worker`). */
  job: string;
  /** The worker's workflow task queue (`sales` by default). */
  task_queue: string;
  /** A PromQL duration: the dashboard's time range, which the count panels count over (e.g. `15m`). */
  range: string;
  /** A PromQL duration for rates; Grafana makes it at least four scrape intervals. Default `1m`. */
  rate_interval?: string;
}

export interface DashboardQuery {
  panel: string;
  refId: string;
  expr: string;
  legendFormat?: string;
  /** Grafana asks for one value at the range's end (stat and bar gauge panels), not a series. */
  instant: boolean;
}

/** The stat panels whose value is a count of events in the dashboard's range, and the counter each counts. */
export const EVENT_COUNT_PANELS = [
  { panel: 'Sales signed', metric: 'etims_sales_signed' },
  { panel: 'Sales parked', metric: 'etims_sales_parked' },
  { panel: 'Sales failed', metric: 'etims_sales_failed' },
  { panel: 'Sales cancelled', metric: 'etims_sales_cancelled' },
  { panel: 'Credit notes signed', metric: 'etims_credit_notes_signed' },
  { panel: 'Stock movements needing an operator', metric: 'etims_stock_movements_needing_operator' },
  { panel: 'Sync batches parked', metric: 'etims_sync_batches_parked' },
] as const satisfies ReadonlyArray<{ panel: string; metric: CounterName }>;

/** The stat panel of work waiting for an operator now: one value per `workflow_type`, a level rather than a count. */
export const OPERATOR_WORK_PANEL = {
  panel: 'Operator work waiting now',
  metric: 'etims_operator_work_waiting',
  by: 'workflow_type',
} as const satisfies { panel: string; metric: GaugeName; by: string };

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;
}

/** Every panel that shows data, in the dashboard's order (rows are headings, their collapsed panels included). */
export function dashboardPanels(dashboard: Dashboard = readDashboard()): GrafanaPanel[] {
  return dashboard.panels.flatMap((panel) => (panel.type === 'row' ? (panel.panels ?? []) : [panel]));
}

/** Every target of the dashboard, its variables substituted: ready for /api/v1/query. */
export function dashboardQueries(
  variables: DashboardVariables,
  dashboard: Dashboard = readDashboard(),
): DashboardQuery[] {
  return dashboardPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      panel: panel.title,
      refId: target.refId,
      expr: substituteVariables(target.expr, variables),
      ...(target.legendFormat !== undefined ? { legendFormat: target.legendFormat } : {}),
      instant: target.instant === true,
    })),
  );
}

/**
 * `$name` and `${name}` of the dashboard's variables replaced; anything else that looks like one (label_replace's
 * `$1`) is left as Grafana leaves it. `job` and `task_queue` are only ever matched with `=~`, so their values are
 * regex-escaped, as Grafana escapes a multi-value variable's, and then escaped for a PromQL string.
 */
export function substituteVariables(expr: string, variables: DashboardVariables): string {
  const values = new Map([
    ['job', promqlRegexLiteral(variables.job)],
    ['task_queue', promqlRegexLiteral(variables.task_queue)],
    ['__range', variables.range],
    ['__rate_interval', variables.rate_interval ?? '1m'],
  ]);
  return expr.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (whole, braced: string | undefined, bare: string | undefined) => values.get(braced ?? bare ?? '') ?? whole,
  );
}

function promqlRegexLiteral(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/[\\"]/g, '\\$&');
}
