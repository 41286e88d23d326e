import {
  condition,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import {
  getOutageWatchStateQuery,
  leaveOutageSignal,
  outageNewsSignal,
  outageTriedSignal,
  waitOutOutageSignal,
  type OutageSide,
  type OutageWatchInput,
  type OutageWatchMemo,
  type OutageWatchState,
  type WaitingSale,
  OUTAGE_WATCH_CARRY_SCHEMA,
} from '../src/contracts/outage-watch.js';

/** Between two probes of a side, and before the first (docs/outages.md). */
const PROBE_PACING = {
  minMs: 10_000,
  firstHourMs: 20_000,
  maxMs: 900_000,
  /** A probing sale that has not said what it found by then (its worker gone): the next one probes. */
  answerMs: 60_000,
};
const HOUR_MS = 3_600_000;
/** A sale joining this soon after its side's release goes at once: held back by a process that had not yet heard. */
const LATE_JOIN_MS = 30_000;
/** The longest a release waits for a sale sent to say it goes before it sends the next. */
const GOING_MS = 2_000;
/** Closes once nobody has waited this long; the next sale to meet an outage starts it again. */
const IDLE_MS = 10 * 60_000;
const SIDES: readonly OutageSide[] = ['service', 'authority'];

/** An application's outages, fleet-wide: docs/outages.md, "How a sale waits". */
export async function outageWatchWorkflow(input: OutageWatchInput = {}): Promise<void> {
  const waiting = new Map<string, WaitingSale & { joinedAt: number; probes: number }>();
  for (const sale of input.waiting ?? []) waiting.set(sale.workflowId, { joinedAt: Date.now(), probes: 0, ...sale });
  const back: Record<OutageSide, boolean> = { service: false, authority: false };
  let probing: { workflowId: string; answered: boolean } | undefined;
  let probes = 0;
  let released = 0;
  const releasedAt: Record<OutageSide, number> = { service: -Infinity, authority: -Infinity };
  /** The sales of the last release: meeting the outage again, they are not late. */
  const sent = new Set<string>();
  /** Sales of the release under way that said they go (their call scheduled). */
  const going = new Set<string>();
  const pacing = PROBE_PACING;
  // Pinned to the build it started on; once another is current, it carries its sales there (docs/deployment.md).
  const movedOn = () => workflowInfo().targetWorkerDeploymentVersionChanged;

  setHandler(waitOutOutageSignal, (sale) => {
    const known = waiting.get(sale.workflowId);
    waiting.set(sale.workflowId, { ...sale, joinedAt: known?.joinedAt ?? Date.now(), probes: known?.probes ?? 0 });
    // A sale held back while the others were being sent joins late: the side has just answered, so it goes too. One
    // that was sent and is back met the outage again: it waits for a probe.
    const late = Date.now() - releasedAt[sale.side] < LATE_JOIN_MS && !sent.has(sale.workflowId);
    if (late) back[sale.side] = true;
  });
  setHandler(outageTriedSignal, ({ workflowId, side, back: through }) => {
    if (probing?.workflowId === workflowId) probing.answered = true;
    if (through) {
      back[side] = true;
      waiting.delete(workflowId);
    }
  });
  setHandler(leaveOutageSignal, ({ workflowId }) => {
    waiting.delete(workflowId);
    going.add(workflowId);
  });
  const waitingCounts = () => ({ service: ordered('service').length, authority: ordered('authority').length });
  setHandler(getOutageWatchStateQuery, (): OutageWatchState => ({
    waiting: waitingCounts(),
    since: { service: oldestJoin('service'), authority: oldestJoin('authority') },
    probes,
    released,
  }));

  function ordered(side: OutageSide) {
    return [...waiting.values()]
      .filter((s) => s.side === side)
      .sort((a, b) => a.priority - b.priority || a.order - b.order || (a.workflowId < b.workflowId ? -1 : 1));
  }
  function oldestJoin(side: OutageSide): string | null {
    const joins = ordered(side).map((s) => s.joinedAt);
    return joins.length === 0 ? null : new Date(Math.min(...joins)).toISOString();
  }
  const tell = (workflowId: string, side: OutageSide, news: 'probe' | 'over') =>
    getExternalWorkflowHandle(workflowId)
      .signal(outageNewsSignal, { side, news })
      // A sale that closed meanwhile no longer waits.
      .catch(() => void waiting.delete(workflowId));

  function probeInterval(): number {
    const joins = [...waiting.values()].map((s) => s.joinedAt);
    const age = joins.length === 0 ? 0 : Date.now() - Math.min(...joins);
    const grown = age <= HOUR_MS ? Math.min(age, pacing.firstHourMs) : age / 30;
    return Math.min(pacing.maxMs, Math.max(pacing.minMs, grown));
  }

  async function release(side: OutageSide): Promise<void> {
    back[side] = false;
    const go = ordered(side);
    if (Date.now() - releasedAt[side] >= LATE_JOIN_MS) sent.clear();
    for (const sale of go) sent.add(sale.workflowId);
    releasedAt[side] = Date.now();
    for (const sale of go) waiting.delete(sale.workflowId);
    released += go.length;
    // Each sale says it goes (its call scheduled) before the next is told, so calls reach the queue in order, far
    // quicker than the budget lets them out. One that does not say so (worker gone, older) is not waited for long.
    going.clear();
    for (const sale of go) {
      await tell(sale.workflowId, side, 'over');
      await condition(() => going.has(sale.workflowId), GOING_MS);
    }
    going.clear();
  }

  let memo = '';
  let application = input.application;
  // In the memo, where the metrics read every watch in one listing; once a probe, not per sale joining: a memo change
  // is an event in the history.
  function showCounts(): void {
    application = [...waiting.values()].find((s) => s.application)?.application ?? application;
    if (!application) return;
    const counts: OutageWatchMemo = { application, waiting: waitingCounts() };
    if (JSON.stringify(counts) === memo) return;
    memo = JSON.stringify(counts);
    upsertMemo({ ...counts });
  }

  for (;;) {
    showCounts();
    if (waiting.size === 0 && !(await condition(() => waiting.size > 0 || movedOn(), IDLE_MS))) return;
    await condition(() => SIDES.some((side) => back[side]) || movedOn(), probeInterval());
    for (const side of SIDES) {
      if (back[side]) await release(side);
      // A probe's answer would come to this run: the next run, on the current build, probes.
      if (movedOn()) continue;
      // The oldest of those probed least: the first probe is the oldest sale's, and later ones go round.
      const prober = ordered(side).sort((a, b) => a.probes - b.probes)[0];
      if (!prober) continue;
      probes++;
      prober.probes++;
      probing = { workflowId: prober.workflowId, answered: false };
      await tell(prober.workflowId, side, 'probe');
      await condition(() => probing!.answered || back[side] || !waiting.has(prober.workflowId), pacing.answerMs);
      probing = undefined;
      if (back[side]) await release(side);
    }
    if (workflowInfo().continueAsNewSuggested || movedOn()) {
      const carried: OutageWatchInput = {
        schema: OUTAGE_WATCH_CARRY_SCHEMA,
        waiting: [...waiting.values()],
        ...(application ? { application } : {}),
      };
      await makeContinueAsNewFunc<typeof outageWatchWorkflow>(
        movedOn() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {},
      )(carried);
    }
  }
}
