/** The outage schedule on its own, on a clock the test moves: when an outage is active, and when its end is announced. */
import { afterEach, describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { OutageError, OutageSchedule, type Outage } from '../../../sandbox/shared/outages.js';

const T0 = Date.parse('2025-06-01T12:00:00Z');
const open: OutageSchedule[] = [];
afterEach(() => {
  for (const schedule of open.splice(0)) schedule.close();
});

function scheduleAt(start: number, fixture: ConstructorParameters<typeof OutageSchedule>[0] = {}) {
  const clock = { now: start };
  const schedule = new OutageSchedule({ ...fixture, now: () => clock.now });
  open.push(schedule);
  const ended: string[] = [];
  schedule.onEnd((outage: Outage) => ended.push(outage.id));
  return { clock, schedule, ended };
}

describe('OutageSchedule', () => {
  it('is scheduled, then active, then ended, by the clock', () => {
    const { clock, schedule } = scheduleAt(T0);
    const added = schedule.add({ kind: 'authority', startInMs: 1_000, durationMs: 2_000 });
    expect(added).toMatchObject({
      id: 'outage-1',
      startsAt: '2025-06-01T12:00:01.000Z',
      endsAt: '2025-06-01T12:00:03.000Z',
      state: 'scheduled',
      mode: 'reject',
      source: 'runtime',
    });
    expect(schedule.interceptSubmission()).toBeUndefined();
    clock.now = T0 + 1_000;
    expect(schedule.interceptSubmission()).toMatchObject({ id: 'outage-1' });
    expect(schedule.get('outage-1')).toMatchObject({ state: 'active', active: true, affected: 1 });
    clock.now = T0 + 3_000;
    expect(schedule.interceptSubmission()).toBeUndefined();
    expect(schedule.get('outage-1')?.state).toBe('ended');
  });

  it('announces the end of an outage removed, replaced or cleared, once', () => {
    const { schedule, ended } = scheduleAt(Date.now());
    schedule.add({ kind: 'authority', id: 'a' });
    schedule.add({ kind: 'authority', id: 'a', mode: 'in_flight' });
    expect(ended).toEqual(['a']);
    expect(schedule.list()).toMatchObject([{ id: 'a', mode: 'in_flight' }]);
    schedule.add({ kind: 'service', id: 'b' });
    schedule.clear();
    expect(ended).toEqual(['a', 'a', 'b']);
    expect(schedule.remove('a')).toBe(false);
  });

  it('announces an end when its time comes', async () => {
    // On the real clock, so the end timer and the clock agree.
    const schedule = new OutageSchedule();
    open.push(schedule);
    const ended: string[] = [];
    schedule.onEnd((outage) => ended.push(outage.id));
    schedule.add({ kind: 'authority', id: 'short', durationMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(ended).toEqual(['short']);
    expect(schedule.get('short')?.state).toBe('ended');
  });

  it('refuses what cannot be an outage', () => {
    const { schedule } = scheduleAt(T0);
    expect(() => schedule.add({ kind: 'service', durationMs: 0 })).toThrow(ZodError);
    expect(() => schedule.add({ kind: 'service', endsAt: '2025-06-01T11:00:00Z' })).toThrow(OutageError);
    expect(schedule.list()).toEqual([]);
  });

  it('reset brings back the fixture outages, those of one service only when asked', () => {
    const { clock, schedule } = scheduleAt(T0, {
      fixture: [
        { kind: 'service', id: 'acc', service: 'accounting', durationMs: 1_000 },
        { kind: 'service', id: 'cmp', endsAt: '2025-06-01T12:00:01Z' },
      ],
    });
    expect(schedule.list().map((o) => [o.id, o.source, o.state])).toEqual([
      ['acc', 'fixture', 'active'],
      ['cmp', 'fixture', 'active'],
    ]);
    schedule.add({ kind: 'service', id: 'extra', service: 'accounting' });
    clock.now = T0 + 5_000;
    schedule.reset('accounting');
    // The accounting one counts again from the reset; an absolute end that has passed is simply over.
    expect(schedule.list().map((o) => [o.id, o.state])).toEqual([
      ['cmp', 'ended'],
      ['acc', 'active'],
    ]);
    schedule.reset();
    expect(schedule.list('compliance').map((o) => [o.id, o.state])).toEqual([['cmp', 'ended']]);
  });
});
