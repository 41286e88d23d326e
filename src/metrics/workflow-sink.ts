// Not the SDK's workflow meter, which adds camelCase labels. Workflow code imports `MetricsSinks` as a type only.
import type { InjectedSinks } from '@temporalio/worker';
import type { Sinks } from '@temporalio/workflow';
import { LRUCache } from 'lru-cache';
import type { CounterName, GaugeName, LabelsOf } from './catalogue.js';
import type { MetricsRecorder } from './recorder.js';

export interface MetricsSinks extends Sinks {
  metrics: {
    /** `occurrence`: which event of the run this is, the same on every attempt of the workflow task. */
    count(name: CounterName, labels: Record<string, string>, value: number, occurrence: string): void;
    set(name: GaugeName, value: number, labels: Record<string, string>): void;
  };
}

/** Occurrences remembered per process: far more than the events of the workflow tasks retried in any minute. */
const REMEMBERED_OCCURRENCES = 100_000;

/**
 * Never called while replaying. A workflow task the server refused is run again, not replayed, and its sink calls
 * with it: each count names its occurrence in the run, so this process does not count the same event twice.
 */
export function metricsSinks(recorder: MetricsRecorder): InjectedSinks<MetricsSinks> {
  const counted = new LRUCache<string, true>({ max: REMEMBERED_OCCURRENCES });
  return {
    metrics: {
      count: {
        fn: (info, name, labels, value, occurrence) => {
          const key = `${info.runId}|${occurrence}`;
          if (counted.has(key)) return;
          counted.set(key, true);
          recorder.count(name, labels as LabelsOf<typeof name>, value);
        },
        callDuringReplay: false,
      },
      set: {
        fn: (_info, name, value, labels) => recorder.set(name, value, labels as LabelsOf<typeof name>),
        callDuringReplay: false,
      },
    },
  };
}
