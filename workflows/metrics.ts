import { CancellationScope, TemporalFailure, isCancellation, proxySinks, workflowInfo } from '@temporalio/workflow';
import type { CounterName, GaugeName, LabelsOf } from '../src/metrics/catalogue.js';
import type { MetricsSinks } from '../src/metrics/sinks.js';

const { metrics } = proxySinks<MetricsSinks>();

/** How many times each (name, labels) was counted in this run so far, replay included: deterministic. */
const occurrences = new Map<string, number>();

/**
 * Counts an event of this execution once: nothing is recorded while replaying, and the event's occurrence number
 * lets the worker drop the same event counted again by a retried workflow task.
 */
export function count<N extends CounterName>(name: N, labels: LabelsOf<N>, value = 1): void {
  const key = `${name}${JSON.stringify(labels)}`;
  const occurrence = (occurrences.get(key) ?? 0) + 1;
  occurrences.set(key, occurrence);
  if (workflowInfo().unsafe.isReplaying) return;
  metrics.count(name, labels, value, `${key}#${occurrence}`);
}

/** Sets a gauge to what this execution found (not while replaying). */
export function setGauge<N extends GaugeName>(name: N, value: number, labels: LabelsOf<N>): void {
  if (workflowInfo().unsafe.isReplaying) return;
  metrics.set(name, value, labels);
}

/**
 * Whether an error escaping the workflow ends it failed, as the SDK decides: a continue-as-new or an honoured
 * cancellation does not, and an error that is no Temporal failure fails only the workflow task, which is retried
 * (counting it would count each retry).
 */
export function failsTheWorkflow(err: unknown): boolean {
  if (isCancellation(err) && CancellationScope.current().consideredCancelled) return false;
  return err instanceof TemporalFailure;
}
