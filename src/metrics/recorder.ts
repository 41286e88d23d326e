// Through the Temporal runtime's meter, so the catalogue's metrics are served on the SDK's Prometheus endpoint.
import type { MetricCounter, MetricGauge, MetricMeter } from '@temporalio/common';
import {
  APPLICATION_LABELS_MAX,
  METRICS,
  boundedValue,
  initialSeries,
  servedSetOf,
  type BusinessProcess,
  type CounterName,
  type GaugeName,
  type LabelsOf,
  type MetricName,
} from './catalogue.js';

export interface MetricsRecorder {
  count<N extends CounterName>(name: N, labels: LabelsOf<N>, value?: number): void;
  set<N extends GaugeName>(name: N, value: number, labels: LabelsOf<N>): void;
  /** Businesses `process` serves, or applications the worker serves: their series start at zero now. */
  knowBusinesses(process: BusinessProcess, businessIds: readonly string[]): void;
  knowApplications(names: readonly string[]): void;
}

export function createMetricsRecorder(
  meter: MetricMeter,
  options: { namespace: string; taskQueue: string },
): MetricsRecorder {
  const base = { namespace: options.namespace, task_queue: options.taskQueue };
  const served = { purchases: new Set<string>(), reconciliation: new Set<string>(), applications: new Set<string>() };
  const instruments = new Map<MetricName, MetricCounter | MetricGauge>();
  const instrument = (name: MetricName) => {
    let made = instruments.get(name);
    if (!made) {
      const { kind, help } = METRICS[name];
      made =
        kind === 'counter'
          ? meter.createCounter(name, undefined, help)
          : meter.createGauge(name, 'float', undefined, help);
      instruments.set(name, made);
    }
    return made;
  };
  const labelsOf = (name: MetricName, labels: Record<string, string>): Record<string, string> => {
    const sets = Object.entries(METRICS[name].labels as Record<string, Parameters<typeof boundedValue>[0]>);
    const bounded = sets.map(([label, set]) => [label, boundedValue(set, labels[label] ?? '', served)] as const);
    return { ...base, ...Object.fromEntries(bounded) };
  };
  /** `process` undefined: every series of fixed label sets. */
  const startAtZero = (process: BusinessProcess | 'applications' | undefined, values: readonly string[]) => {
    for (const name of Object.keys(METRICS) as MetricName[]) {
      // Gauges are published when first measured: a zero would claim a value nobody measured.
      if (METRICS[name].kind !== 'counter' || servedSetOf(name) !== process) continue;
      for (const series of initialSeries(name, values))
        (instrument(name) as MetricCounter).add(0, { ...base, ...series });
    }
  };
  const know = (process: BusinessProcess | 'applications', values: readonly string[], room = Infinity) => {
    const fresh = [...new Set(values)].filter((value) => !served[process].has(value)).slice(0, room);
    for (const value of fresh) served[process].add(value);
    startAtZero(process, fresh);
  };
  startAtZero(undefined, []);
  return {
    count: (name, labels, value = 1) => (instrument(name) as MetricCounter).add(value, labelsOf(name, labels)),
    set: (name, value, labels) => (instrument(name) as MetricGauge).set(value, labelsOf(name, labels)),
    knowBusinesses: know,
    knowApplications: (names) =>
      know('applications', names, Math.max(0, APPLICATION_LABELS_MAX - served.applications.size)),
  };
}
