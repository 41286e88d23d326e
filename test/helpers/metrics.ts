/**
 * The workflows' metrics sink for test workers: the product's sink (src/metrics/workflow-sink.ts) over a recorder
 * that keeps what was recorded, so a test can read what a workflow counted, in the labels it would be published with.
 */
import type { InjectedSinks } from '@temporalio/worker';
import type { CounterName, GaugeName, LabelsOf } from '../../src/metrics/catalogue.js';
import type { MetricsRecorder } from '../../src/metrics/recorder.js';
import type { MetricsSinks } from '../../src/metrics/sinks.js';
import { metricsSinks } from '../../src/metrics/workflow-sink.js';

export interface RecordedMetric {
  name: string;
  value: number;
  labels: Record<string, string>;
}

export interface RecordingMetrics extends MetricsRecorder {
  readonly counted: RecordedMetric[];
  readonly gauges: RecordedMetric[];
  /** The sum of a counter over the recordings whose labels include `labels`. */
  total(name: CounterName, labels?: Record<string, string>): number;
  /** The last value a gauge was set to with labels including `labels`. */
  last(name: GaugeName, labels?: Record<string, string>): number | undefined;
  sinks(): InjectedSinks<MetricsSinks>;
}

export function recordingMetrics(): RecordingMetrics {
  const counted: RecordedMetric[] = [];
  const gauges: RecordedMetric[] = [];
  const matches = (m: RecordedMetric, name: string, labels: Record<string, string>) =>
    m.name === name && Object.entries(labels).every(([k, v]) => m.labels[k] === v);
  const recorder: RecordingMetrics = {
    counted,
    gauges,
    count: <N extends CounterName>(name: N, labels: LabelsOf<N>, value = 1) => void counted.push({ name, value, labels: { ...labels } }),
    set: <N extends GaugeName>(name: N, value: number, labels: LabelsOf<N>) => void gauges.push({ name, value, labels: { ...labels } }),
    knowBusinesses: () => undefined,
    total: (name, labels = {}) => counted.filter((m) => matches(m, name, labels)).reduce((sum, m) => sum + m.value, 0),
    last: (name, labels = {}) => gauges.filter((m) => matches(m, name, labels)).at(-1)?.value,
    sinks: () => metricsSinks(recorder),
  };
  return recorder;
}
