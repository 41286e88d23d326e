import { CancellationScope, TemporalFailure, isCancellation, proxySinks, workflowInfo } from '@temporalio/workflow';
import type { CounterName, GaugeName, LabelsOf } from '../src/metrics/catalogue.js';
import type { MetricsSinks } from '../src/metrics/workflow-sink.js';

const { metrics } = proxySinks<MetricsSinks>();

const OCCURRENCES = Symbol.for('etims.metricOccurrences');

/**
 * How many times each (name, labels) was counted in this run so far, replay included: deterministic. Kept on the
 * workflow's global object, which the SDK keeps apart for each workflow: this module is shared between them.
 */
function occurrences(): Map<string, number> {
  const global = globalThis as { [OCCURRENCES]?: Map<string, number> };
  return (global[OCCURRENCES] ??= new Map());
}

/** Counts once: nothing while replaying, and the occurrence number lets the worker drop a retried task's count. */
export function count<N extends CounterName>(name: N, labels: LabelsOf<N>, value = 1): void {
  const key = `${name}${JSON.stringify(labels)}`;
  const seen = occurrences();
  const occurrence = (seen.get(key) ?? 0) + 1;
  seen.set(key, occurrence);
  if (workflowInfo().unsafe.isReplaying) return;
  metrics.count(name, labels, value, `${key}#${occurrence}`);
}

/** Sets a gauge to what this execution found (not while replaying). */
export function setGauge<N extends GaugeName>(name: N, value: number, labels: LabelsOf<N>): void {
  if (workflowInfo().unsafe.isReplaying) return;
  metrics.set(name, value, labels);
}

/** Not a continue-as-new, an honoured cancellation, or a non-Temporal error (it fails only the task, retried). */
export function failsTheWorkflow(err: unknown): boolean {
  if (isCancellation(err) && CancellationScope.current().consideredCancelled) return false;
  return err instanceof TemporalFailure;
}
