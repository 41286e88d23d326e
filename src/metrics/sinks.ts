/**
 * The sink workflow code records metrics through: the worker's recorder (src/metrics/recorder.ts) behind it, so a
 * workflow's series carry the same snake_case labels as every other (the SDK's workflow meter would add its own
 * camelCase `taskQueue` and `workflowType`). Types only: workflow code imports this file.
 */
import type { Sinks } from '@temporalio/workflow';
import type { CounterName, GaugeName } from './catalogue.js';

export interface MetricsSinks extends Sinks {
  metrics: {
    /** `occurrence`: which event of the run this is (name, labels and its number among them), the same on every attempt. */
    count(name: CounterName, labels: Record<string, string>, value: number, occurrence: string): void;
    set(name: GaugeName, value: number, labels: Record<string, string>): void;
  };
}
