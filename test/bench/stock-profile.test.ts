/** Where a ledger's time went, read from hand-made histories. */
import { describe, expect, it } from 'vitest';
import { ledgerProfile, toLedgerEvents, type LedgerEvent } from '../../tools/bench/stock-profile.js';

const e = (id: number, type: string, at: number, scheduledId?: number): LedgerEvent => ({
  id,
  type,
  at,
  ...(scheduledId === undefined ? {} : { scheduledId }),
});

describe("a ledger's profile", () => {
  const run1 = [
    e(1, 'WORKFLOW_EXECUTION_STARTED', 0),
    e(2, 'WORKFLOW_EXECUTION_SIGNALED', 0),
    e(3, 'WORKFLOW_TASK_SCHEDULED', 0),
    e(4, 'WORKFLOW_TASK_STARTED', 10, 3),
    e(5, 'WORKFLOW_TASK_COMPLETED', 30, 3),
    // A movement at bookkeeping priority not started before its deadline, then one at till priority that ran.
    e(6, 'ACTIVITY_TASK_SCHEDULED', 30),
    e(7, 'ACTIVITY_TASK_TIMED_OUT', 1_030, 6),
    e(8, 'ACTIVITY_TASK_SCHEDULED', 1_100),
    e(9, 'ACTIVITY_TASK_STARTED', 1_400, 8),
    e(10, 'ACTIVITY_TASK_COMPLETED', 1_450, 8),
  ];
  const run2 = [
    e(1, 'WORKFLOW_EXECUTION_STARTED', 2_000),
    e(2, 'WORKFLOW_TASK_SCHEDULED', 2_000),
    e(3, 'WORKFLOW_TASK_STARTED', 2_050, 2),
    e(4, 'WORKFLOW_TASK_COMPLETED', 2_060, 2),
    // Started, then its worker killed: timed out running.
    e(5, 'ACTIVITY_TASK_SCHEDULED', 2_060),
    e(6, 'ACTIVITY_TASK_STARTED', 2_100, 5),
    e(7, 'ACTIVITY_TASK_TIMED_OUT', 62_100, 5),
    { ...e(8, 'WORKFLOW_TASK_FAILED', 62_200), failure: 'UNHANDLED_COMMAND: x' },
    e(9, 'WORKFLOW_TASK_TIMED_OUT', 62_300),
  ];

  it('counts runs, hand-overs, movements, those not started in time and those timed out running', () => {
    expect(ledgerProfile([run1, run2])).toMatchObject({
      runs: 2,
      events: 19,
      handOvers: 1,
      movements: 3,
      notStartedInTime: 1,
      timedOutRunning: 1,
    });
  });

  it('counts the workflow tasks that failed or timed out, by failure', () => {
    expect(ledgerProfile([run1, run2])).toMatchObject({
      workflowTaskFailures: 2,
      failures: { 'UNHANDLED_COMMAND: x': 1, 'timed out': 1 },
    });
  });

  it("spreads the workflow tasks' waits and runs and the movements' queue waits", () => {
    const p = ledgerProfile([run1, run2]);
    expect(p.workflowTaskWaitMs).toEqual({ n: 2, p50: 10, p90: 50, max: 50 });
    expect(p.workflowTaskRunMs).toEqual({ n: 2, p50: 10, p90: 20, max: 20 });
    expect(p.movementWaitMs).toEqual({ n: 2, p50: 40, p90: 300, max: 300 });
  });

  it('reads the facts it needs from a raw history event', () => {
    const [event, failed] = toLedgerEvents([
      {
        eventId: 9 as never,
        eventType: 11 as never,
        eventTime: { seconds: 2 as never, nanos: 5_000_000 },
        activityTaskStartedEventAttributes: { scheduledEventId: 8 as never },
      },
      {
        eventId: 10 as never,
        eventType: 9 as never,
        eventTime: { seconds: 3 as never },
        workflowTaskFailedEventAttributes: { cause: 1 as never, failure: { message: 'boom' } },
      },
    ]);
    expect(event).toEqual({ id: 9, type: 'ACTIVITY_TASK_STARTED', at: 2_005, scheduledId: 8 });
    expect(failed).toMatchObject({ type: 'WORKFLOW_TASK_FAILED', failure: 'UNHANDLED_COMMAND: boom' });
  });
});
