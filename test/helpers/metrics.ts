/**
 * The workflows' metrics sink for test workers: the product's sink (src/metrics/workflow-sink.ts) over a recorder
 * that keeps what was recorded, so a test can read what a workflow counted, in the labels it would be published with.
 * Each recording also keeps the workflow id the sink was called for, so tests sharing one worker can each read
 * only their own workflows' recordings.
 */
import type { InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { CounterName, GaugeName, LabelsOf } from '../../src/metrics/catalogue.js';
import type { MetricsRecorder } from '../../src/metrics/recorder.js';
import { metricsSinks, type MetricsSinks } from '../../src/metrics/workflow-sink.js';

export interface RecordedMetric {
  name: string;
  value: number;
  labels: Record<string, string>;
  /** The workflow whose sink call recorded it (undefined: recorded outside the sink). */
  workflowId?: string;
}

/** Recordings, and the reads tests make of them. */
export interface MetricReadings {
  readonly counted: RecordedMetric[];
  readonly gauges: RecordedMetric[];
  /** The sum of a counter over the recordings whose labels include `labels`. */
  total(name: CounterName, labels?: Record<string, string>): number;
  /** The last value a gauge was set to with labels including `labels`. */
  last(name: GaugeName, labels?: Record<string, string>): number | undefined;
}

export interface RecordingMetrics extends MetricsRecorder, MetricReadings {
  sinks(): InjectedSinks<MetricsSinks>;
  /** The recordings of the workflows `recordedFor` accepts (read as they grow). */
  of(recordedFor: (workflowId: string) => boolean): MetricReadings;
}

function readingsOf(counted: RecordedMetric[], gauges: RecordedMetric[]): MetricReadings {
  const matches = (m: RecordedMetric, name: string, labels: Record<string, string>) =>
    m.name === name && Object.entries(labels).every(([k, v]) => m.labels[k] === v);
  return {
    counted,
    gauges,
    total: (name, labels = {}) => counted.filter((m) => matches(m, name, labels)).reduce((sum, m) => sum + m.value, 0),
    last: (name, labels = {}) => gauges.filter((m) => matches(m, name, labels)).at(-1)?.value,
  };
}

export function recordingMetrics(): RecordingMetrics {
  const counted: RecordedMetric[] = [];
  const gauges: RecordedMetric[] = [];
  /** The workflow whose sink call is under way: sink functions call the recorder synchronously. */
  let callFor: string | undefined;
  const recorded = (name: string, value: number, labels: Record<string, string>): RecordedMetric => ({
    name,
    value,
    labels: { ...labels },
    ...(callFor === undefined ? {} : { workflowId: callFor }),
  });
  const recorder: RecordingMetrics = {
    ...readingsOf(counted, gauges),
    count: <N extends CounterName>(name: N, labels: LabelsOf<N>, value = 1) =>
      void counted.push(recorded(name, value, labels)),
    set: <N extends GaugeName>(name: N, value: number, labels: LabelsOf<N>) =>
      void gauges.push(recorded(name, value, labels)),
    knowBusinesses: () => undefined,
    knowApplications: () => undefined,
    sinks: () => attributed(metricsSinks(recorder), (workflowId) => (callFor = workflowId)),
    of: (recordedFor) => {
      const mine = (m: RecordedMetric) => m.workflowId !== undefined && recordedFor(m.workflowId);
      // Views over the live arrays, so a reading taken before the workflow ends sees what it records later.
      return {
        get counted() {
          return counted.filter(mine);
        },
        get gauges() {
          return gauges.filter(mine);
        },
        total: (name, labels) => readingsOf(counted.filter(mine), []).total(name, labels),
        last: (name, labels) => readingsOf([], gauges.filter(mine)).last(name, labels),
      };
    },
  };
  return recorder;
}

/** The product's sinks, each call made with the workflow it is for set by `enter` (undefined again after). */
function attributed(
  sinks: InjectedSinks<MetricsSinks>,
  enter: (workflowId: string | undefined) => void,
): InjectedSinks<MetricsSinks> {
  const within =
    <A extends unknown[]>(fn: (info: WorkflowInfo, ...args: A) => void | Promise<void>) =>
    (info: WorkflowInfo, ...args: A) => {
      enter(info.workflowId);
      try {
        return fn(info, ...args);
      } finally {
        enter(undefined);
      }
    };
  const { count, set } = sinks.metrics;
  return { metrics: { count: { ...count, fn: within(count.fn) }, set: { ...set, fn: within(set.fn) } } };
}
