/**
 * Records the catalogue's metrics (src/metrics/catalogue.ts) through the Temporal runtime's meter, so they are
 * served on the same Prometheus endpoint as the SDK's. One recorder per worker process: it adds the process's
 * `namespace` and `task_queue`, bounds every label value to its set, and publishes every known series at zero
 * when created.
 */
import type { MetricCounter, MetricGauge, MetricMeter } from '@temporalio/common';
import { BUSINESS_LABEL, METRICS, boundedValue, initialSeries, type CounterName, type GaugeName, type LabelsOf, type MetricName } from './catalogue.js';

export interface MetricsRecorder {
  count<N extends CounterName>(name: N, labels: LabelsOf<N>, value?: number): void;
  set<N extends GaugeName>(name: N, value: number, labels: LabelsOf<N>): void;
  /** Businesses learnt after start (the purchases sync's, read from the keys): their series start at zero now. */
  knowBusinesses(businessIds: readonly string[]): void;
}

export interface MetricsRecorderOptions {
  namespace: string;
  /** The process's workflow task queue: the fleet its series belong to. */
  taskQueue: string;
  /** The businesses the worker is configured for: the values `business_id` may take besides `other`. */
  businesses?: readonly string[];
}

export function createMetricsRecorder(meter: MetricMeter, options: MetricsRecorderOptions): MetricsRecorder {
  const base = { namespace: options.namespace, task_queue: options.taskQueue };
  const known = new Set<string>();
  const instruments = new Map<MetricName, MetricCounter | MetricGauge>();
  const instrument = (name: MetricName) => {
    let made = instruments.get(name);
    if (!made) {
      const { kind, help } = METRICS[name];
      made = kind === 'counter' ? meter.createCounter(name, undefined, help) : meter.createGauge(name, 'float', undefined, help);
      instruments.set(name, made);
    }
    return made;
  };
  const labelsOf = (name: MetricName, labels: Record<string, string>): Record<string, string> => {
    const sets = METRICS[name].labels as Record<string, Parameters<typeof boundedValue>[0]>;
    const bounded: Record<string, string> = { ...base };
    for (const [label, set] of Object.entries(sets)) bounded[label] = boundedValue(set, labels[label] ?? '', known);
    return bounded;
  };
  /** Publishes at zero every counter series of these businesses (none: every series without a business). */
  const startAtZero = (businesses: readonly string[], withoutBusiness: boolean) => {
    for (const name of Object.keys(METRICS) as MetricName[]) {
      // Gauges are published when first measured: a zero would claim a value nobody measured.
      if (METRICS[name].kind !== 'counter') continue;
      if ((BUSINESS_LABEL in METRICS[name].labels) === withoutBusiness) continue;
      for (const series of initialSeries(name, businesses)) (instrument(name) as MetricCounter).add(0, { ...base, ...series });
    }
  };
  const knowBusinesses = (businessIds: readonly string[]) => {
    const fresh = [...new Set(businessIds)].filter((id) => !known.has(id));
    for (const id of fresh) known.add(id);
    startAtZero(fresh, false);
  };
  startAtZero([], true);
  knowBusinesses(options.businesses ?? []);
  return {
    count: (name, labels, value = 1) => (instrument(name) as MetricCounter).add(value, labelsOf(name, labels)),
    set: (name, value, labels) => (instrument(name) as MetricGauge).set(value, labelsOf(name, labels)),
    knowBusinesses,
  };
}
