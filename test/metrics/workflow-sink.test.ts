/**
 * The workflows' metrics sink counts each event of a run once, also when the workflow task that counted it is run
 * again after the server refused its completion (a signal arrived meanwhile): the live Prometheus test found signed
 * sales counted twice that way.
 */
import type { WorkflowInfo } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { metricsSinks } from '../../src/metrics/workflow-sink.js';
import { recordingMetrics } from '../helpers/metrics.js';

const info = (runId: string) => ({ runId, workflowId: 'sale:biz:INV-1' }) as WorkflowInfo;

describe('metricsSinks', () => {
  it('counts an occurrence of a run once, however many attempts of its workflow task report it', () => {
    const recorded = recordingMetrics();
    const { count } = metricsSinks(recorded).metrics;
    count.fn(info('run-1'), 'etims_sales_signed', {}, 1, 'etims_sales_signed{}#1');
    count.fn(info('run-1'), 'etims_sales_signed', {}, 1, 'etims_sales_signed{}#1');
    expect(recorded.total('etims_sales_signed')).toBe(1);
    // The run's next event of the same kind, and the same occurrence in another run, are other events.
    count.fn(info('run-1'), 'etims_sales_signed', {}, 1, 'etims_sales_signed{}#2');
    count.fn(info('run-2'), 'etims_sales_signed', {}, 1, 'etims_sales_signed{}#1');
    expect(recorded.total('etims_sales_signed')).toBe(3);
  });
});
