import type { InjectedSinks } from '@temporalio/worker';
import type { LabelsOf } from './catalogue.js';
import type { MetricsRecorder } from './recorder.js';
import type { MetricsSinks } from './sinks.js';

/**
 * The worker's side of the workflows' metrics sink. Never called while replaying: a history replayed on another
 * worker (a cache eviction, a restart) counts nothing twice.
 */
export function metricsSinks(recorder: MetricsRecorder): InjectedSinks<MetricsSinks> {
  return {
    metrics: {
      count: { fn: (_info, name, labels, value) => recorder.count(name, labels as LabelsOf<typeof name>, value), callDuringReplay: false },
      set: { fn: (_info, name, value, labels) => recorder.set(name, value, labels as LabelsOf<typeof name>), callDuringReplay: false },
    },
  };
}
