import { describe, expect, it } from 'vitest';
import {
  activityWait,
  carriesSignedReceipt,
  medianProfile,
  recordedAfter,
  segments,
  segmentsToCaller,
  signedRecorded,
  signingActivity,
  waitsBefore,
  type BenchEvent,
} from '../../tools/bench/history.js';
import { median } from '../../tools/bench/stats.js';

const signed = { outcome: 'signed', document: { id: 'sal_1', receipt: { signature: 'ABCD', cuInvoiceNo: 'X/1' } } };
const inFlight = { outcome: 'in_flight', document: { id: 'sal_1', receipt: null } };

/** A sale's history: an item check, then `signing` (whose result is `result`), recorded by the next workflow task. */
function history(signing: string, result: unknown, t0 = 1_000): BenchEvent[] {
  let id = 0;
  const e = (type: string, at: number, extra: Partial<BenchEvent> = {}): BenchEvent => ({
    id: ++id,
    type,
    at: t0 + at,
    ...extra,
  });
  return [
    e('WORKFLOW_EXECUTION_STARTED', 5),
    e('WORKFLOW_TASK_SCHEDULED', 5),
    e('WORKFLOW_TASK_STARTED', 20),
    e('WORKFLOW_TASK_COMPLETED', 40),
    e('ACTIVITY_TASK_SCHEDULED', 40, { activity: 'checkItems' }),
    e('ACTIVITY_TASK_STARTED', 60, { activity: 'checkItems' }),
    e('ACTIVITY_TASK_COMPLETED', 62, { activity: 'checkItems', result: { items: [] } }),
    e('WORKFLOW_TASK_SCHEDULED', 62),
    e('WORKFLOW_TASK_STARTED', 70),
    e('WORKFLOW_TASK_COMPLETED', 80),
    e('ACTIVITY_TASK_SCHEDULED', 80, { activity: signing }),
    e('ACTIVITY_TASK_STARTED', 95, { activity: signing }),
    e('ACTIVITY_TASK_COMPLETED', 110, { activity: signing, result }),
    e('WORKFLOW_TASK_SCHEDULED', 110),
    e('WORKFLOW_TASK_STARTED', 120),
    e('WORKFLOW_TASK_COMPLETED', 135),
    // What that task did next: hand the stock lines over to the branch's ledger (a local activity's marker).
    e('MARKER_RECORDED', 135),
  ];
}

describe('the moment a signed receipt is recorded', () => {
  it('is the first workflow task completed after the activity whose result carries the receipt, whatever its name', () => {
    for (const name of ['createSale', 'signSale']) {
      const events = history(name, signed);
      expect(signedRecorded(events)?.at).toBe(1_135);
      expect(signingActivity(events)).toBe(name);
    }
  });

  it('is not found while the document is only in flight', () => {
    expect(signedRecorded(history('createSale', inFlight))).toBeUndefined();
  });

  it('needs a non-empty signature, at any reasonable depth', () => {
    expect(carriesSignedReceipt({ a: { b: { receipt: { signature: 'S' } } } })).toBe(true);
    expect(carriesSignedReceipt({ receipt: { signature: '' } })).toBe(false);
    expect(carriesSignedReceipt({ receipt: { signature: null } })).toBe(false);
    expect(carriesSignedReceipt('receipt')).toBe(false);
  });

  it('for any activity picked by the caller (the floor)', () => {
    expect(recordedAfter(history('readLookup', 3), (e) => e.activity === 'readLookup')?.at).toBe(1_135);
  });
});

describe('where the time went', () => {
  it('reads activity queue waits from scheduled to started', () => {
    const events = history('signSale', signed);
    expect(activityWait(events, 'signSale')).toBe(15);
    expect(activityWait(events, 'missing')).toBeUndefined();
    expect(waitsBefore(events, signedRecorded(events)!)).toEqual({ checkItems: 20, signSale: 15 });
  });

  it('splits client start → recorded into steps that add up to the whole', () => {
    const events = history('signSale', signed);
    const steps = segments(events, 990, signedRecorded(events)!);
    expect(steps[0]).toEqual({ label: 'client start → WORKFLOW_EXECUTION_STARTED', ms: 15 });
    expect(steps).toContainEqual({
      label: 'ACTIVITY_TASK_SCHEDULED(signSale) → ACTIVITY_TASK_STARTED(signSale)',
      ms: 15,
    });
    expect(steps.reduce((a, s) => a + s.ms, 0)).toBe(1_135 - 990);
  });

  it('takes the median of each step over runs of the most common shape, leaving odd runs out', () => {
    const run = (t0: number) => {
      const events = history('signSale', signed, t0);
      return segments(events, t0, signedRecorded(events)!);
    };
    const odd = [{ label: 'something else', ms: 999 }];
    const profile = medianProfile([run(0), run(0), run(0), odd], median);
    expect(profile.runs).toBe(3);
    expect(profile.leftOut).toBe(1);
    expect(profile.steps.reduce((a, s) => a + s.ms, 0)).toBe(135);
  });
});

describe('retried activities', () => {
  it('name the attempt whose start the history kept, so a lost first attempt shows in a profile', () => {
    const events = history('signSale', signed).map((e) =>
      e.type === 'ACTIVITY_TASK_STARTED' && e.activity === 'signSale' ? { ...e, attempt: 2 } : e,
    );
    const steps = segments(events, 1_000, signedRecorded(events)!);
    expect(steps.map((s) => s.label)).toContain(
      'ACTIVITY_TASK_SCHEDULED(signSale) → ACTIVITY_TASK_STARTED(signSale, attempt 2)',
    );
  });
});

describe("a call answered in the caller's hands (the till, the floor by executeWorkflow)", () => {
  it("ends with the step from the event that answered (the update completed) to the answer in the caller's hands", () => {
    const events = [...history('signSale', signed), { id: 18, type: 'WORKFLOW_EXECUTION_UPDATE_COMPLETED', at: 1_135 }];
    const steps = segmentsToCaller(events, 990, (e) => e.type === 'WORKFLOW_EXECUTION_UPDATE_COMPLETED', 1_150);
    expect(steps.at(-1)).toEqual({ label: "WORKFLOW_EXECUTION_UPDATE_COMPLETED → in the caller's hands", ms: 15 });
    expect(steps.reduce((a, s) => a + s.ms, 0)).toBe(1_150 - 990);
  });

  it('is the whole call as one step when the history has no such event', () => {
    expect(segmentsToCaller(history('signSale', signed), 990, () => false, 1_150)).toEqual([
      { label: "client start → in the caller's hands", ms: 160 },
    ]);
  });
});
