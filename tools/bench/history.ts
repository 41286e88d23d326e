/**
 * What the bench reads from a workflow's history: the server's event times (same machine clock as the client), the
 * activities' names and their decoded results. The conversion is the only part that talks to Temporal; every
 * measurement below works on plain events, so it is unit-tested on hand-made histories.
 */
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';

type RawEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = proto.temporal.api.enums.v1.EventType;

export interface BenchEvent {
  id: number;
  /** e.g. WORKFLOW_TASK_COMPLETED (the proto name without its EVENT_TYPE_ prefix). */
  type: string;
  /** Server time, epoch ms. */
  at: number;
  /** Activity scheduled: its type; started / completed: the type of the activity they belong to. */
  activity?: string;
  /** Activity completed: its decoded result. */
  result?: unknown;
  /** Activity started: which attempt (the history records only the last one's start). */
  attempt?: number;
}

function eventMs(event: RawEvent): number {
  const t = event.eventTime;
  if (!t) throw new Error(`history event ${String(event.eventId)} has no time`);
  return Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6;
}

function toPayload(p: temporal.api.common.v1.IPayload): Payload {
  return { metadata: { ...(p.metadata ?? {}) }, data: p.data ?? new Uint8Array() };
}

/** The history as BenchEvents, activity results decoded through `codec` (the workers' payload encryption). */
export async function toBenchEvents(events: readonly RawEvent[], codec: PayloadCodec): Promise<BenchEvent[]> {
  const names = new Map<number, string>();
  const out: BenchEvent[] = [];
  for (const e of events) {
    const id = Number(e.eventId);
    const type = (EventType[e.eventType ?? 0] ?? 'UNKNOWN').replace(/^EVENT_TYPE_/, '');
    const event: BenchEvent = { id, type, at: eventMs(e) };
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) names.set(id, scheduled.activityType?.name ?? '?');
    const ofActivity = scheduled
      ? id
      : Number(
          e.activityTaskStartedEventAttributes?.scheduledEventId ??
            e.activityTaskCompletedEventAttributes?.scheduledEventId ??
            NaN,
        );
    if (names.has(ofActivity)) event.activity = names.get(ofActivity)!;
    const attempt = e.activityTaskStartedEventAttributes?.attempt;
    if (attempt) event.attempt = attempt;
    const payloads = e.activityTaskCompletedEventAttributes?.result?.payloads;
    if (payloads?.length) {
      const [decoded] = await codec.decode(payloads.map(toPayload));
      if (decoded) event.result = defaultPayloadConverter.fromPayload(decoded);
    }
    out.push(event);
  }
  return out;
}

/** Whether a value carries a signed receipt: an object `receipt` with a non-empty `signature`, at any depth up to 4. */
export function carriesSignedReceipt(value: unknown, depth = 4): boolean {
  if (depth < 0 || typeof value !== 'object' || value === null) return false;
  const receipt = (value as { receipt?: unknown }).receipt;
  if (typeof receipt === 'object' && receipt !== null) {
    const signature = (receipt as { signature?: unknown }).signature;
    if (typeof signature === 'string' && signature.length > 0) return true;
  }
  return Object.values(value).some((v) => carriesSignedReceipt(v, depth - 1));
}

/**
 * When the workflow recorded the outcome of the first activity that `completed` picks: the first workflow task
 * completed after that activity's completion. Undefined when there is none (yet).
 */
export function recordedAfter(
  events: readonly BenchEvent[],
  completed: (e: BenchEvent) => boolean,
): BenchEvent | undefined {
  const index = events.findIndex((e) => e.type === 'ACTIVITY_TASK_COMPLETED' && completed(e));
  if (index < 0) return undefined;
  return events.slice(index + 1).find((e) => e.type === 'WORKFLOW_TASK_COMPLETED');
}

/** The moment the signed receipt was recorded, whatever the activity that brought it is called. */
export const signedRecorded = (events: readonly BenchEvent[]) =>
  recordedAfter(events, (e) => carriesSignedReceipt(e.result));

/** The name of the activity whose result carried the signed receipt. */
export const signingActivity = (events: readonly BenchEvent[]) =>
  events.find((e) => e.type === 'ACTIVITY_TASK_COMPLETED' && carriesSignedReceipt(e.result))?.activity;

/** How long the first scheduling of `activity` waited in its queue (scheduled → started), ms. */
export function activityWait(events: readonly BenchEvent[], activity: string): number | undefined {
  const scheduled = events.find((e) => e.type === 'ACTIVITY_TASK_SCHEDULED' && e.activity === activity);
  if (!scheduled) return undefined;
  const started = events.find(
    (e) => e.type === 'ACTIVITY_TASK_STARTED' && e.activity === activity && e.id > scheduled.id,
  );
  return started ? started.at - scheduled.at : undefined;
}

export interface Segment {
  /** e.g. "client start → WORKFLOW_EXECUTION_STARTED", "ACTIVITY_TASK_SCHEDULED → ACTIVITY_TASK_STARTED (createSale)". */
  label: string;
  ms: number;
}

/**
 * Where the time to `until` went: client start to the first event, then every step between consecutive events
 * up to `until`, labelled by the two events (and the activity). Events written in the same instant are one step.
 */
export function segments(events: readonly BenchEvent[], clientStart: number, until: BenchEvent): Segment[] {
  const path = events.filter((e) => e.id <= until.id);
  const first = path[0];
  if (!first) return [];
  const out: Segment[] = [{ label: `client start → ${first.type}`, ms: first.at - clientStart }];
  const name = (e: BenchEvent) =>
    e.activity ? `${e.type}(${e.activity}${e.attempt && e.attempt > 1 ? `, attempt ${e.attempt}` : ''})` : e.type;
  for (let i = 1; i < path.length; i++) {
    const prev = path[i - 1]!;
    const cur = path[i]!;
    out.push({ label: `${name(prev)} → ${name(cur)}`, ms: cur.at - prev.at });
  }
  return out;
}

/**
 * Where the time of a call answered in the caller's hands went: the steps up to the first event `answered` picks
 * (an update completed, the workflow completed), then from it to `inHands` (the client's clock). Without such an
 * event, the whole call is one step.
 */
export function segmentsToCaller(
  events: readonly BenchEvent[],
  clientStart: number,
  answered: (e: BenchEvent) => boolean,
  inHands: number,
): Segment[] {
  const until = events.find(answered);
  if (!until) return [{ label: "client start → in the caller's hands", ms: inHands - clientStart }];
  return [
    ...segments(events, clientStart, until),
    { label: `${until.type} → in the caller's hands`, ms: inHands - until.at },
  ];
}

/**
 * The median of each step over many runs of the same path. Runs whose steps differ from the most common shape are
 * left out (and counted), so one odd run (a retry, a late poll) does not scramble the profile.
 */
export function medianProfile(
  runs: readonly Segment[][],
  median: (v: number[]) => number,
): { steps: Segment[]; runs: number; leftOut: number } {
  const shapes = new Map<string, Segment[][]>();
  for (const run of runs) {
    const key = run.map((s) => s.label).join('|');
    shapes.set(key, [...(shapes.get(key) ?? []), run]);
  }
  const common = [...shapes.values()].sort((a, b) => b.length - a.length)[0] ?? [];
  const template = common[0] ?? [];
  const steps = template.map((s, i) => ({ label: s.label, ms: median(common.map((r) => r[i]!.ms)) }));
  return { steps, runs: common.length, leftOut: runs.length - common.length };
}

/** The queue wait (scheduled → started, ms) of each activity scheduled before `until`, by name (first scheduling). */
export function waitsBefore(events: readonly BenchEvent[], until: BenchEvent): Record<string, number> {
  const waits: Record<string, number> = {};
  for (const e of events) {
    if (e.id > until.id) break;
    if (e.type === 'ACTIVITY_TASK_SCHEDULED' && e.activity && !(e.activity in waits)) {
      const wait = activityWait(events, e.activity);
      if (wait !== undefined) waits[e.activity] = wait;
    }
  }
  return waits;
}
