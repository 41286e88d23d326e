/**
 * Every payload the longevity run put in Temporal: the histories of every workflow run on the section's task queue
 * (syncs, purchases books, stock-in runs, mapping buckets, stock ledgers, sales), each payload's serialized size as the
 * server holds it (encrypted, the Payloads message), where it is, and the longest history of any run. The listings of
 * the syncs' pages are decoded too (their query says the pass).
 */
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import type { BenchTemporal } from './env.js';
import { mapLimit } from './stats.js';

type RawEvent = temporal.api.history.v1.IHistoryEvent;
type RawPayloads = temporal.api.common.v1.IPayloads | null | undefined;
const EventType = proto.temporal.api.enums.v1.EventType;
const PayloadsMessage = proto.temporal.api.common.v1.Payloads;

export interface PayloadSite {
  workflowType: string;
  workflowId: string;
  runId: string;
  eventId: number;
  /** e.g. ACTIVITY_TASK_SCHEDULED (input), WORKFLOW_EXECUTION_SIGNALED. */
  event: string;
  /** What it is: `input`, `result`, `lastCompletionResult`, `args`, `details.<key>`. */
  part: string;
  /** The activity, signal, update or marker it belongs to. */
  name: string;
  bytes: number;
}

export interface RunHistory {
  workflowType: string;
  workflowId: string;
  runId: string;
  events: number;
  startedAt: number;
}

/** A listing page of a sync: its query, when it was scheduled, and its run. */
export interface SyncListing {
  workflowId: string;
  runId: string;
  at: number;
  activity: 'pullPurchases' | 'listPurchasesPage';
  query: { status?: string; fromDate?: string; toDate?: string; cursor?: string | null };
}

export interface Histories {
  runs: RunHistory[];
  /** Every payload, largest first. */
  payloads: PayloadSite[];
  listings: SyncListing[];
  /** Real ms to list and read them. */
  readMs: number;
}

const sizeOf = (p: RawPayloads) =>
  p?.payloads?.length ? PayloadsMessage.encode({ payloads: p.payloads }).finish().length : 0;

const eventMs = (e: RawEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

/** The payloads of one history event: (part, name, payloads). */
function payloadsOf(
  e: RawEvent,
  names: { activities: Map<number, string>; updates: Map<string, string> },
): Array<[string, string, RawPayloads]> {
  const out: Array<[string, string, RawPayloads]> = [];
  const a = e;
  if (a.workflowExecutionStartedEventAttributes) {
    const s = a.workflowExecutionStartedEventAttributes;
    out.push(['input', '', s.input], ['lastCompletionResult', '', s.lastCompletionResult]);
  }
  if (a.workflowExecutionContinuedAsNewEventAttributes) {
    const s = a.workflowExecutionContinuedAsNewEventAttributes;
    out.push(['input', '', s.input], ['lastCompletionResult', '', s.lastCompletionResult]);
  }
  if (a.workflowExecutionCompletedEventAttributes)
    out.push(['result', '', a.workflowExecutionCompletedEventAttributes.result]);
  if (a.workflowExecutionSignaledEventAttributes) {
    const s = a.workflowExecutionSignaledEventAttributes;
    out.push(['input', s.signalName ?? '', s.input]);
  }
  if (a.workflowExecutionUpdateAdmittedEventAttributes) {
    const input = a.workflowExecutionUpdateAdmittedEventAttributes.request?.input;
    out.push(['args', input?.name ?? '', input?.args]);
  }
  if (a.workflowExecutionUpdateAcceptedEventAttributes) {
    const request = a.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest;
    const name = request?.input?.name ?? '';
    if (request?.meta?.updateId) names.updates.set(request.meta.updateId, name);
    out.push(['args', name, request?.input?.args]);
  }
  if (a.workflowExecutionUpdateCompletedEventAttributes) {
    const c = a.workflowExecutionUpdateCompletedEventAttributes;
    out.push(['result', names.updates.get(c.meta?.updateId ?? '') ?? '', c.outcome?.success]);
  }
  if (a.activityTaskScheduledEventAttributes) {
    const s = a.activityTaskScheduledEventAttributes;
    names.activities.set(Number(e.eventId), s.activityType?.name ?? '');
    out.push(['input', s.activityType?.name ?? '', s.input]);
  }
  if (a.activityTaskCompletedEventAttributes) {
    const c = a.activityTaskCompletedEventAttributes;
    out.push(['result', names.activities.get(Number(c.scheduledEventId)) ?? '', c.result]);
  }
  if (a.markerRecordedEventAttributes) {
    const m = a.markerRecordedEventAttributes;
    for (const [key, value] of Object.entries(m.details ?? {}))
      out.push([`details.${key}`, m.markerName ?? '', value as RawPayloads]);
  }
  if (a.startChildWorkflowExecutionInitiatedEventAttributes) {
    const s = a.startChildWorkflowExecutionInitiatedEventAttributes;
    out.push(['input', s.workflowType?.name ?? '', s.input]);
  }
  if (a.signalExternalWorkflowExecutionInitiatedEventAttributes) {
    const s = a.signalExternalWorkflowExecutionInitiatedEventAttributes;
    out.push(['input', s.signalName ?? '', s.input]);
  }
  return out;
}

const toPayload = (p: temporal.api.common.v1.IPayload): Payload => ({
  metadata: { ...(p.metadata ?? {}) },
  data: p.data ?? new Uint8Array(),
});

/** The first value of a Payloads, decoded through the codec (the bench's payload encryption). */
export async function decodeFirst(codec: PayloadCodec, p: RawPayloads): Promise<unknown> {
  const first = p?.payloads?.[0];
  if (!first) return undefined;
  const [decoded] = await codec.decode([toPayload(first)]);
  return decoded ? defaultPayloadConverter.fromPayload(decoded) : undefined;
}

/** Every run on `taskQueue` (visibility), its history read, its payloads measured. */
export async function readHistories(
  t: BenchTemporal,
  taskQueue: string,
  options: { concurrency?: number; syncType: string },
): Promise<Histories> {
  const began = Date.now();
  const executions: Array<{ workflowId: string; runId: string; type: string; startedAt: number }> = [];
  for await (const e of t.client.workflow.list({ query: `TaskQueue = '${taskQueue}'` }))
    executions.push({ workflowId: e.workflowId, runId: e.runId, type: e.type, startedAt: e.startTime.getTime() });
  const runs: RunHistory[] = [];
  const payloads: PayloadSite[] = [];
  const listings: SyncListing[] = [];
  await mapLimit(executions, options.concurrency ?? 8, async (x) => {
    const history = await t.client.workflow.getHandle(x.workflowId, x.runId).fetchHistory();
    const events = history.events ?? [];
    runs.push({
      workflowType: x.type,
      workflowId: x.workflowId,
      runId: x.runId,
      events: events.length,
      startedAt: x.startedAt,
    });
    const names = { activities: new Map<number, string>(), updates: new Map<string, string>() };
    for (const e of events) {
      const event = (EventType[e.eventType ?? 0] ?? 'UNKNOWN').replace(/^EVENT_TYPE_/, '');
      for (const [part, name, p] of payloadsOf(e, names)) {
        const bytes = sizeOf(p);
        if (bytes === 0) continue;
        payloads.push({
          workflowType: x.type,
          workflowId: x.workflowId,
          runId: x.runId,
          eventId: Number(e.eventId),
          event,
          part,
          name,
          bytes,
        });
      }
      const scheduled = e.activityTaskScheduledEventAttributes;
      const activity = scheduled?.activityType?.name;
      if (x.type === options.syncType && (activity === 'listPurchasesPage' || activity === 'pullPurchases')) {
        const input = (await decodeFirst(t.encryption.codec, scheduled!.input)) as SyncListing['query'] | undefined;
        listings.push({ workflowId: x.workflowId, runId: x.runId, at: eventMs(e), activity, query: input ?? {} });
      }
    }
  });
  payloads.sort((a, b) => b.bytes - a.bytes);
  return { runs, payloads, listings, readMs: Date.now() - began };
}

/** The decoded value of one payload site (to count the records it carries). */
export async function decodeSite(t: BenchTemporal, site: PayloadSite): Promise<unknown> {
  const history = await t.client.workflow.getHandle(site.workflowId, site.runId).fetchHistory();
  const names = { activities: new Map<number, string>(), updates: new Map<string, string>() };
  for (const e of history.events ?? []) {
    const found = payloadsOf(e, names).find(([part]) => part === site.part);
    if (Number(e.eventId) === site.eventId && found) return decodeFirst(t.encryption.codec, found[2]);
  }
  return undefined;
}
