import { condition, continueAsNew, getExternalWorkflowHandle, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  getOutageWatchStateQuery,
  leaveOutageSignal,
  outageNewsSignal,
  outageTriedSignal,
  waitOutOutageSignal,
  type OutageSide,
  type OutageWatchInput,
  type OutageWatchState,
  type WaitingSale,
} from '../src/contracts/outage-watch.js';

/**
 * Between two probes of a side: as long as the outage is old, from 4 s up to 30 s in its first hour (a blip costs a
 * few seconds, an hour-long outage at most 30 s after it ends, two requests a minute), then a 30th of its age, up to
 * 15 minutes, so a days-long outage costs each waiting sale's history little (probes also go round the sales).
 */
const PROBE_INTERVAL_MIN_MS = 4_000;
const PROBE_INTERVAL_HOUR_MS = 30_000;
const PROBE_INTERVAL_MAX_MS = 900_000;
const HOUR_MS = 3_600_000;
/** A probing sale that has not said what it found by then (its worker gone): the next one probes. */
const PROBE_ANSWER_MS = 120_000;
/** Closes once nobody has waited this long; the next sale to meet an outage starts it again. */
const IDLE_MS = 10 * 60_000;
const SIDES: readonly OutageSide[] = ['service', 'authority'];

/**
 * An application's outages, fleet-wide: the sales that met one wait here rather than spend the budget on calls that
 * cannot succeed. One at a time, the oldest waiting sale tries once; as soon as any sale gets through, every sale
 * waiting on that side is told to go, in the order of priority then age, and the queue's budget paces them.
 */
export async function outageWatchWorkflow(input: OutageWatchInput = {}): Promise<void> {
  const waiting = new Map<string, WaitingSale & { joinedAt: number; probes: number }>();
  for (const sale of input.waiting ?? []) waiting.set(sale.workflowId, { joinedAt: Date.now(), probes: 0, ...sale });
  const back: Record<OutageSide, boolean> = { service: false, authority: false };
  let probing: { workflowId: string; answered: boolean } | undefined;
  let probes = 0;
  let released = 0;

  setHandler(waitOutOutageSignal, (sale) => {
    const known = waiting.get(sale.workflowId);
    waiting.set(sale.workflowId, { ...sale, joinedAt: known?.joinedAt ?? Date.now(), probes: known?.probes ?? 0 });
  });
  setHandler(outageTriedSignal, ({ workflowId, side, back: through }) => {
    if (probing?.workflowId === workflowId) probing.answered = true;
    if (through) {
      back[side] = true;
      waiting.delete(workflowId);
    }
  });
  setHandler(leaveOutageSignal, ({ workflowId }) => void waiting.delete(workflowId));
  setHandler(getOutageWatchStateQuery, (): OutageWatchState => {
    const of = (side: OutageSide) => ordered(side);
    return {
      waiting: { service: of('service').length, authority: of('authority').length },
      since: {
        service: oldestJoin('service'),
        authority: oldestJoin('authority'),
      },
      probes,
      released,
    };
  });

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
    const grown = age <= HOUR_MS ? Math.min(age, PROBE_INTERVAL_HOUR_MS) : age / 30;
    return Math.min(PROBE_INTERVAL_MAX_MS, Math.max(PROBE_INTERVAL_MIN_MS, grown));
  }

  async function release(side: OutageSide): Promise<void> {
    back[side] = false;
    const go = ordered(side);
    for (const sale of go) waiting.delete(sale.workflowId);
    released += go.length;
    // One after another: each sale hears before the next is told, so their calls reach the queue mostly oldest
    // first. Telling is far quicker than the budget lets calls out, so it costs the recovery nothing.
    for (const sale of go) await tell(sale.workflowId, side, 'over');
  }

  for (;;) {
    if (waiting.size === 0 && !(await condition(() => waiting.size > 0, IDLE_MS))) return;
    for (const side of SIDES) {
      if (back[side]) await release(side);
      // The oldest of those probed least: the first probe is the oldest sale's, and later ones go round.
      const prober = ordered(side).sort((a, b) => a.probes - b.probes)[0];
      if (!prober) continue;
      probes++;
      prober.probes++;
      probing = { workflowId: prober.workflowId, answered: false };
      await tell(prober.workflowId, side, 'probe');
      await condition(() => probing!.answered || back[side] || !waiting.has(prober.workflowId), PROBE_ANSWER_MS);
      probing = undefined;
      if (back[side]) await release(side);
    }
    if (workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof outageWatchWorkflow>({ waiting: [...waiting.values()] });
    await condition(() => SIDES.some((side) => back[side]), probeInterval());
  }
}
