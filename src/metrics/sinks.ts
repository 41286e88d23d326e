// Not the SDK's workflow meter, which adds camelCase labels. Types only: workflow code imports this file.
import type { Sinks } from '@temporalio/workflow';
import type { CounterName, GaugeName } from './catalogue.js';

export interface MetricsSinks extends Sinks {
  metrics: {
    /** `occurrence`: which event of the run this is, the same on every attempt of the workflow task. */
    count(name: CounterName, labels: Record<string, string>, value: number, occurrence: string): void;
    set(name: GaugeName, value: number, labels: Record<string, string>): void;
  };
}
