/**
 * Records the catalogue's metrics (src/metrics/catalogue.ts) through the Temporal runtime's meter, so they are
 * served on the same Prometheus endpoint as the SDK's. One recorder per worker process: it adds the process's
 * `namespace` and `task_queue`, bounds every label value to its set, and publishes every known series at zero
 * when created.
 */
import type { MetricCounter, MetricGauge, MetricMeter } from '@temporalio/common';
import { METRICS, boundedValue, businessProcessOf, initialSeries, type BusinessProcess, type CounterName, type GaugeName, type LabelsOf, type MetricName } from './catalogue.js';

export interface MetricsRecorder {
  count<N extends CounterName>(name: N, labels: LabelsOf<N>, value?: number): void;
  set<N extends GaugeName>(name: N, value: number, labels: LabelsOf<N>): void;
  /** Businesses `process` serves (known once its schedules are made): their series start at zero now. */
  knowBusinesses(process: BusinessProcess, businessIds: readonly string[]): void;
}

export interface MetricsRecorderOptions {
  namespace: string;
  /** The process's workflow task queue: the fleet its series belong to. */
  taskQueue: string;
}

export function createMetricsRecorder(meter: MetricMeter, options: MetricsRecorderOptions): MetricsRecorder {
  const base = { namespace: options.namespace, task_queue: options.taskQueue };
  const served = { purchases: new Set<string>(), reconciliation: new Set<string>() };
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
    for (const [label, set] of Object.entries(sets)) bounded[label] = boundedValue(set, labels[label] ?? '', served);
    return bounded;
  };
  /** Publishes at zero every counter series of `process`'s businesses, or (no process) every series without a business. */
  const startAtZero = (process: BusinessProcess | undefined, businesses: readonly string[]) => {
    for (const name of Object.keys(METRICS) as MetricName[]) {
      // Gauges are published when first measured: a zero would claim a value nobody measured.
      if (METRICS[name].kind !== 'counter' || businessProcessOf(name) !== process) continue;
      for (const series of initialSeries(name, businesses)) (instrument(name) as MetricCounter).add(0, { ...base, ...series });
    }
  };
  const knowBusinesses = (process: BusinessProcess, businessIds: readonly string[]) => {
    const fresh = [...new Set(businessIds)].filter((id) => !served[process].has(id));
    for (const id of fresh) served[process].add(id);
    startAtZero(process, fresh);
  };
  startAtZero(undefined, []);
  return {
    count: (name, labels, value = 1) => (instrument(name) as MetricCounter).add(value, labelsOf(name, labels)),
    set: (name, value, labels) => (instrument(name) as MetricGauge).set(value, labelsOf(name, labels)),
    knowBusinesses,
  };
}
