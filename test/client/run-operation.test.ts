/**
 * An update the server refuses because the workflow's last task failed is asked again until that task goes through.
 * The refusal is built as the SDK hands it over (a ServiceError whose cause is the gRPC error): a real server refuses
 * so only in a moment no test can hold open on demand (a day book's continue-as-new met by a burst of entries, seen by
 * the quick bench on PostgreSQL).
 */
import { ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { FiscalDayOperationError } from '../../src/client/fiscal-days.js';
import { runOperation } from '../../src/client/sales-client.js';

function refusedWhileTaskFailed(message = 'Workflow Update failed'): ServiceError {
  const cause = Object.assign(
    new Error(
      '9 FAILED_PRECONDITION: Unable to perform workflow execution update due to Workflow Task in failed state.',
    ),
    {
      code: 9,
      details: 'Unable to perform workflow execution update due to Workflow Task in failed state.',
      metadata: {},
    },
  );
  return new ServiceError(message, { cause });
}

describe('runOperation', () => {
  it('asks again an update refused while the workflow task failed, and answers once it goes through', async () => {
    let calls = 0;
    const answer = await runOperation(FiscalDayOperationError, 'close', 'fiscal-day:x', async () => {
      calls++;
      if (calls <= 2) throw refusedWhileTaskFailed();
      return 'closed';
    });
    expect(answer).toBe('closed');
    expect(calls).toBe(3);
  });

  it('gives the refusal up after its bound, and gives a query or any other failure back at once', async () => {
    let calls = 0;
    const started = Date.now();
    await expect(
      runOperation(
        FiscalDayOperationError,
        'close',
        'fiscal-day:x',
        async () => {
          calls++;
          throw refusedWhileTaskFailed();
        },
        { taskFailedRetryMs: 1_000 },
      ),
    ).rejects.toThrow(/Workflow Update failed/);
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(5_000);

    calls = 0;
    const query = runOperation(FiscalDayOperationError, 'close', 'fiscal-day:x', async () => {
      calls++;
      throw refusedWhileTaskFailed('Failed to query Workflow');
    });
    await expect(query).rejects.toThrow(/Failed to query Workflow/);
    expect(calls).toBe(1);

    calls = 0;
    const missing = runOperation(FiscalDayOperationError, 'close', 'fiscal-day:y', async () => {
      calls++;
      throw new WorkflowNotFoundError('not found', 'fiscal-day:y', undefined);
    });
    await expect(missing).rejects.toMatchObject({ name: 'FiscalDayOperationError', failure: 'not_found' });
    expect(calls).toBe(1);
  });
});
