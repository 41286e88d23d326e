/**
 * Every workflow replays against the histories recorded from real runs of each released version
 * (test/histories/<version>/, written by tools/record-histories.ts), so a change that would break executions
 * already running fails here first.
 */
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Runtime, Worker, bundleWorkflowCode, makeTelemetryFilterString, type ReplayResult } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { CatalogueChunkInput } from '../../src/contracts/catalogue-import.js';
import { SIGNED_ITEM_CHECK_PATCH } from '../../workflows/sale/documents.js';
import {
  HELD_UP_SPENDS_NOTHING_PATCH,
  PACE_CARRIED_PATCH,
  PACE_MARGIN_PATCH,
  PACE_READS_WINDOW_PATCH,
  REGISTRATION_WITH_CREATION_PATCH,
} from '../../workflows/catalogue-chunk.js';
import { testLogger } from '../helpers/temporal.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';

const historiesDir = fileURLToPath(new URL('../histories/', import.meta.url));

interface StoredHistory {
  workflowId: string;
  workflowType: string;
  history: ReturnType<typeof historyFromJSON>;
}

let stored: StoredHistory[];

beforeAll(async () => {
  // The negative test fails workflow tasks on purpose; core would log each as a warning.
  Runtime.install({
    logger: testLogger,
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const files = (await readdir(historiesDir, { recursive: true })).filter((f) => f.endsWith('.json')).toSorted();
  stored = await Promise.all(
    files.map(async (file) => {
      const history = historyFromJSON(JSON.parse(await readFile(`${historiesDir}${file}`, 'utf8')));
      const workflowType = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
      return { workflowId: file.replace(/\.json$/, ''), workflowType, history };
    }),
  );
});

type HistoryEvents = NonNullable<StoredHistory['history']['events']>;

/** A stored history's events by its `<version>/<name>` id; none when it is not stored. */
function eventsOf(id: string): HistoryEvents {
  return stored.find((h) => h.workflowId === id)?.history.events ?? [];
}

/** The paths recorded for `version`, by name. */
function namesOf(version: string): string[] {
  return stored
    .filter((h) => h.workflowId.startsWith(`${version}/`))
    .map((h) => h.workflowId.slice(version.length + 1))
    .sort();
}

function patchIdsOf(events: HistoryEvents): Array<string | undefined> {
  return events.flatMap((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
    return data ? [(defaultPayloadConverter.fromPayload(data) as { id?: string }).id] : [];
  });
}

async function replayAll(
  bundle: Awaited<ReturnType<typeof workflowBundle>>,
  histories: StoredHistory[],
): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) results.push(result);
  return results;
}

describe('replay of recorded histories', () => {
  it('has recorded histories of every workflow', () => {
    const types = new Set(stored.map((h) => h.workflowType));
    expect([...types].toSorted()).toEqual([
      'catalogueChunkWorkflow',
      'catalogueImportWorkflow',
      'itemRegistrationWorkflow',
      'outageWatchWorkflow',
      'purchasesSyncWorkflow',
      'reconciliationWorkflow',
      'saleWorkflow',
      'stockLedgerWorkflow',
      'syncBatchWorkflow',
    ]);
    expect(stored.length).toBeGreaterThanOrEqual(6);
  });

  it('holds every run of an execution that continued as new: a deploy can find any of them running', () => {
    const started = (h: StoredHistory) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const runIds = new Set(stored.map((h) => started(h)?.originalExecutionRunId));
    const continued = stored.flatMap((h) => {
      const next = h.history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      return next ? [{ workflowId: h.workflowId, workflowType: h.workflowType, next }] : [];
    });
    expect(continued.filter((c) => !runIds.has(c.next)).map((c) => c.workflowId)).toEqual([]);
    // The chains the recorder makes on purpose: later runs start from what the previous one carried.
    expect(new Set(continued.map((c) => c.workflowType))).toEqual(
      new Set(['purchasesSyncWorkflow', 'syncBatchWorkflow']),
    );
    expect(stored.some((h) => h.workflowType === 'purchasesSyncWorkflow' && started(h)?.continuedExecutionRunId)).toBe(
      true,
    );
  });

  it('holds no patch marker in the 1.0.0 baseline: every later change of a workflow is patched', () => {
    const markers = stored
      .filter((h) => h.workflowId.startsWith('1.0.0/'))
      .flatMap((h) =>
        (h.history.events ?? []).flatMap((e) =>
          e.markerRecordedEventAttributes?.details?.['patch-data'] ? [h.workflowId] : [],
        ),
      );
    expect(stored.filter((h) => h.workflowId.startsWith('1.0.0/')).length).toBeGreaterThan(0);
    expect(markers).toEqual([]);
  });

  it('holds the 1.1.0 sales on the ride-outages path: both outages waited out by the sale itself', () => {
    const patchIds = (h: StoredHistory) => patchIdsOf(h.history.events ?? []);
    const sales = stored.filter(
      (h) => h.workflowId.startsWith('1.1.0/sale-') && h.workflowId !== '1.1.0/sale-invalid-input',
    );
    expect(sales.length).toBeGreaterThan(10);
    for (const sale of sales) expect(patchIds(sale), sale.workflowId).toContain('ride-outages');
    const events = (id: string) => stored.find((h) => h.workflowId === `1.1.0/${id}`)?.history.events ?? [];
    // The authority refused the submission: the sale waited and resubmitted, with nobody's update.
    const authority = events('sale-authority-outage');
    expect(
      authority.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'retrySale').length,
    ).toBeGreaterThanOrEqual(1);
    expect(authority.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toBe(false);
    // The service answered 503 until the call's tries were spent: the activity failed and the sale called again.
    const service = events('sale-service-outage');
    expect(service.some((e) => e.activityTaskFailedEventAttributes)).toBe(true);
    // Both waited on the application's watch, which asked one to probe and then told it to go.
    for (const sale of [authority, service])
      expect(sale.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'outageNews')).toBe(true);
    const watch = events('outage-watch');
    const sent = watch.flatMap((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName ?? []);
    expect(sent).toContain('outageNews');
    const heard = watch.flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? []);
    expect(heard).toEqual(expect.arrayContaining(['waitOutOutage', 'outageTried']));
  });

  it('holds the 1.2.0 watch on its paced path: the first probe after an interval, its counts in the memo', () => {
    const watch = stored.find((h) => h.workflowId === '1.2.0/outage-watch')?.history.events ?? [];
    expect(patchIdsOf(watch)).toContain('outage-probe-pacing');
    const memos = watch.flatMap((e) => {
      const fields = e.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields;
      return fields
        ? [Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, defaultPayloadConverter.fromPayload(v)]))]
        : [];
    });
    expect(memos[0]).toMatchObject({ application: 'default', waiting: expect.any(Object) });
    // The sales went, and the watch said so before it went idle.
    expect(memos.at(-1)).toMatchObject({ waiting: { service: 0, authority: 0 } });
    // The 1.1.0 watch, on the first pacing, keeps no memo: replaying it takes the old path.
    const old = stored.find((h) => h.workflowId === '1.1.0/outage-watch')?.history.events ?? [];
    expect(old.some((e) => e.workflowPropertiesModifiedEventAttributes)).toBe(false);
  });

  it('holds a 1.2.0 sale the watch sent while its probe was under way: it went again at once, not waiting for news', () => {
    const events = stored.find((h) => h.workflowId === '1.2.0/sale-sent-while-calling')?.history.events ?? [];
    expect(patchIdsOf(events)).toContain('outage-sent-while-calling');
    const retries = events.flatMap((e, i) =>
      e.activityTaskScheduledEventAttributes?.activityType?.name === 'retrySale' ? [i] : [],
    );
    expect(retries).toHaveLength(2);
    const between = events.slice(retries[0], retries[1]);
    expect(between.some((e) => e.activityTaskCompletedEventAttributes)).toBe(true);
    expect(between.some((e) => e.timerStartedEventAttributes)).toBe(false);
  });

  it('holds the stock ledger’s paths: a lost answer settled by a probe, lines merged, a refused movement re-sent on an operator’s word', () => {
    const events = stored.find((h) => h.workflowId === '1.0.0/stock-ledger')?.history.events ?? [];
    const movements = events.flatMap((e) => {
      const payload = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0];
      return payload
        ? [defaultPayloadConverter.fromPayload(payload) as { action: string; quantity: number; referenceId: string }]
        : [];
    });
    expect(movements.filter((m) => m.quantity === 0).length).toBeGreaterThanOrEqual(3);
    expect(movements.some((m) => m.referenceId.startsWith('stk:') && m.quantity > 0)).toBe(true);
    const refs = movements.filter((m) => m.quantity > 0).map((m) => m.referenceId);
    expect(new Set(refs).size).toBe(refs.length - 1);
    expect(events.filter((e) => e.activityTaskFailedEventAttributes).length).toBe(2);
    expect(
      events.some(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'settleMovement',
      ),
    ).toBe(true);
    const sale = stored.find((h) => h.workflowId === '1.0.0/sale-stock-ledger')?.history.events ?? [];
    expect(sale.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'stockCarried')).toBe(true);
  });

  it('holds a 1.3.0 sale whose stock the signing activity handed over, beside an older one that handed it over itself', () => {
    const events = (id: string) => {
      const found = stored.find((h) => h.workflowId === id);
      expect(found, `${id} is recorded`).toBeDefined();
      return found!.history.events ?? [];
    };
    const localActivities = (id: string) =>
      events(id).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
    const results = (id: string) =>
      events(id).flatMap((e) => {
        const payload = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
        return payload
          ? [defaultPayloadConverter.fromPayload(payload) as { handedOver?: { ledgerWorkflowId: string } }]
          : [];
      });
    // The placement's local activity alone: the signing result names the ledger that took the lines.
    expect(results('1.3.0/sale-stock-ledger')[0]?.handedOver?.ledgerWorkflowId).toMatch(/^stock-ledger:/);
    expect(localActivities('1.3.0/sale-stock-ledger')).toBe(1);
    // Recorded before: no ledger in the signing result, so the same code hands over with its local activity.
    expect(results('1.1.0/sale-stock-ledger')[0]?.handedOver).toBeUndefined();
    expect(localActivities('1.1.0/sale-stock-ledger')).toBe(2);
  });

  it('holds a 1.5.0 catalogue import whose chunks go in turn at background priority, pace their rows and hand the pace on, beside a 1.4.0 one that did none of it', () => {
    const events = (id: string) => {
      const found = stored.find((h) => h.workflowId === id);
      expect(found, `${id} is recorded`).toBeDefined();
      return found!.history.events ?? [];
    };
    const timers = (id: string) => events(id).filter((e) => e.timerStartedEventAttributes).length;
    const chunkPriority = (id: string) =>
      events(id).find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)
        ?.startChildWorkflowExecutionInitiatedEventAttributes?.priority?.priorityKey;
    expect(patchIdsOf(events('1.5.0/catalogue-import'))).toContain('catalogue-chunks-in-turn');
    expect(chunkPriority('1.5.0/catalogue-import')).toBe(5);
    const chunkInput = (id: string) => {
      const payload = events(id)[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      return payload ? (defaultPayloadConverter.fromPayload(payload) as CatalogueChunkInput) : undefined;
    };
    for (const chunk of ['1.5.0/catalogue-chunk-0', '1.5.0/catalogue-chunk-1'])
      expect(patchIdsOf(events(chunk))).toContain('catalogue-rows-paced');
    expect(timers('1.5.0/catalogue-chunk-0')).toBeGreaterThan(0);
    expect(chunkInput('1.5.0/catalogue-chunk-0')?.pace).toBeUndefined();
    expect(chunkInput('1.5.0/catalogue-chunk-1')?.pace?.rowsPerSecond).toBeGreaterThan(0);
    expect(patchIdsOf(events('1.4.0/catalogue-import'))).toEqual([]);
    expect(chunkPriority('1.4.0/catalogue-import') ?? 0).toBe(0);
    expect(timers('1.4.0/catalogue-chunk')).toBe(0);
  });

  it('holds 1.5.3 catalogue chunks whose pace carries its fractions and whose calls heartbeat, and an item registration whose call does, beside older ones', () => {
    const creations = (id: string) =>
      eventsOf(id).flatMap((e) => {
        const a = e.activityTaskScheduledEventAttributes;
        return a?.activityType?.name === 'createCatalogueItem' ? [a] : [];
      });
    for (const chunk of ['1.5.3/catalogue-chunk-0', '1.5.3/catalogue-chunk-1']) {
      expect(patchIdsOf(eventsOf(chunk))).toContain(PACE_CARRIED_PATCH);
      expect(creations(chunk).length).toBeGreaterThan(0);
      expect(creations(chunk).every((a) => Number(a.heartbeatTimeout?.seconds) === 10)).toBe(true);
    }
    expect(patchIdsOf(eventsOf('1.5.0/catalogue-chunk-0'))).not.toContain(PACE_CARRIED_PATCH);
    expect(creations('1.5.0/catalogue-chunk-0').every((a) => !a.heartbeatTimeout?.seconds)).toBe(true);
    // An item's registration call heartbeats too, beside one recorded before it did.
    const registrations = (id: string) =>
      eventsOf(id).flatMap((e) => {
        const a = e.activityTaskScheduledEventAttributes;
        return a?.activityType?.name === 'registerItem' ? [a] : [];
      });
    expect(registrations('1.5.3/catalogue-item-registration').map((a) => Number(a.heartbeatTimeout?.seconds))).toEqual([
      10,
    ]);
    expect(registrations('1.5.1/item-registration').length).toBeGreaterThan(0);
    expect(registrations('1.5.1/item-registration').every((a) => !a.heartbeatTimeout?.seconds)).toBe(true);
  });

  it('holds 1.5.4 catalogue chunks whose creations hand items to their registration, beside 1.5.3 ones that asked for it in a task of their own', () => {
    const scheduled = (id: string, name: string) =>
      eventsOf(id).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name);
    const waitFor = (id: string) =>
      scheduled(id, 'createCatalogueItem').map((e) => {
        const payload = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0];
        return payload ? (defaultPayloadConverter.fromPayload(payload) as { waitFor?: unknown }).waitFor : undefined;
      });
    expect(patchIdsOf(eventsOf('1.5.4/catalogue-chunk-0'))).toContain(REGISTRATION_WITH_CREATION_PATCH);
    expect(scheduled('1.5.4/catalogue-chunk-0', 'requestItemRegistration')).toHaveLength(0);
    expect(waitFor('1.5.4/catalogue-chunk-0').every((w) => w !== undefined)).toBe(true);
    // The registration the 1.5.4 chunk's creation asked for still came back to it.
    expect(eventsOf('1.5.4/catalogue-chunk-0').some((e) => e.workflowExecutionSignaledEventAttributes)).toBe(true);
    expect(patchIdsOf(eventsOf('1.5.3/catalogue-chunk-0'))).not.toContain(REGISTRATION_WITH_CREATION_PATCH);
    expect(scheduled('1.5.3/catalogue-chunk-0', 'requestItemRegistration').length).toBeGreaterThan(0);
    expect(waitFor('1.5.3/catalogue-chunk-0').every((w) => w === undefined)).toBe(true);
  });

  it('holds 1.5.5 catalogue chunks whose pace takes a held-up row for no spent budget, beside 1.5.4 ones', () => {
    for (const chunk of ['1.5.5/catalogue-chunk-0', '1.5.5/catalogue-chunk-1']) {
      expect(patchIdsOf(eventsOf(chunk)), chunk).toContain(HELD_UP_SPENDS_NOTHING_PATCH);
      expect(patchIdsOf(eventsOf(chunk)), chunk).toContain(REGISTRATION_WITH_CREATION_PATCH);
    }
    expect(patchIdsOf(eventsOf('1.5.4/catalogue-chunk-0'))).not.toContain(HELD_UP_SPENDS_NOTHING_PATCH);
  });

  it('holds 1.5.6 histories of every path, recorded with workflow code that keeps 5 frames of stack trace', () => {
    expect(namesOf('1.5.6')).toEqual([...namesOf('1.5.4'), 'sale-sent-while-calling'].sort());
    expect(patchIdsOf(eventsOf('1.5.6/catalogue-chunk-0'))).toContain(HELD_UP_SPENDS_NOTHING_PATCH);
  });

  it('holds 1.5.11 histories of every path; its reconciliation and purchases syncs make the same commands as 1.5.6', () => {
    expect(namesOf('1.5.11')).toEqual(namesOf('1.5.6'));
    // Their page loop and delivered-count check became shared functions: the same awaits, so the same events.
    const steps = (id: string) =>
      eventsOf(id).map((e) => `${e.eventType} ${e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''}`);
    const changed = namesOf('1.5.11').filter((n) => n.startsWith('reconciliation') || n.startsWith('purchases-sync'));
    expect(changed.length).toBeGreaterThanOrEqual(5);
    for (const name of changed) expect(steps(`1.5.11/${name}`), name).toEqual(steps(`1.5.6/${name}`));
  });

  it('holds 1.5.12 histories of every path, each making the same commands as its 1.5.11 history', () => {
    expect(namesOf('1.5.12')).toEqual(namesOf('1.5.11'));
    // Only pure code changed shape. Where workflow tasks end and when signals land depend on timing, so the
    // comparison reads what the workflow decided: the commands, in order.
    const commandAttributes = [
      'activityTaskScheduledEventAttributes',
      'activityTaskCancelRequestedEventAttributes',
      'timerStartedEventAttributes',
      'timerCanceledEventAttributes',
      'markerRecordedEventAttributes',
      'upsertWorkflowSearchAttributesEventAttributes',
      'workflowPropertiesModifiedEventAttributes',
      'startChildWorkflowExecutionInitiatedEventAttributes',
      'signalExternalWorkflowExecutionInitiatedEventAttributes',
      'requestCancelExternalWorkflowExecutionInitiatedEventAttributes',
      'workflowExecutionUpdateCompletedEventAttributes',
      'workflowExecutionCompletedEventAttributes',
      'workflowExecutionFailedEventAttributes',
      'workflowExecutionCanceledEventAttributes',
      'workflowExecutionContinuedAsNewEventAttributes',
    ] as const;
    const commands = (id: string) =>
      eventsOf(id).flatMap((e) => {
        const kind = commandAttributes.find((attributes) => e[attributes]);
        return kind ? [`${kind} ${e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''}`] : [];
      });
    for (const name of namesOf('1.5.12')) {
      expect(commands(`1.5.12/${name}`).length, name).toBeGreaterThan(0);
      expect(commands(`1.5.12/${name}`), name).toEqual(commands(`1.5.11/${name}`));
    }
  });

  it('holds 1.5.7 catalogue chunks whose pace leaves the limiter a margin, beside 1.5.6 ones', () => {
    for (const chunk of ['1.5.7/catalogue-chunk-0', '1.5.7/catalogue-chunk-1']) {
      expect(patchIdsOf(eventsOf(chunk)), chunk).toContain(PACE_MARGIN_PATCH);
      expect(patchIdsOf(eventsOf(chunk)), chunk).toContain(HELD_UP_SPENDS_NOTHING_PATCH);
    }
    expect(patchIdsOf(eventsOf('1.5.6/catalogue-chunk-0'))).not.toContain(PACE_MARGIN_PATCH);
  });

  it('holds 1.5.9 catalogue chunks whose pace reads the service’s window, beside 1.5.7 ones', () => {
    for (const chunk of ['1.5.9/catalogue-chunk-0', '1.5.9/catalogue-chunk-1']) {
      expect(patchIdsOf(eventsOf(chunk)), chunk).toContain(PACE_READS_WINDOW_PATCH);
      expect(patchIdsOf(eventsOf(chunk)), chunk).toContain(PACE_MARGIN_PATCH);
    }
    expect(patchIdsOf(eventsOf('1.5.7/catalogue-chunk-0'))).not.toContain(PACE_READS_WINDOW_PATCH);
  });

  it('holds 1.5.4 sales whose compliance calls heartbeat, beside 1.5.1 ones whose calls waited out their timeout', () => {
    const heartbeats = (id: string) =>
      (stored.find((h) => h.workflowId === id)?.history.events ?? []).flatMap((e) => {
        const a = e.activityTaskScheduledEventAttributes;
        return a && a.taskQueue?.name?.includes('.compliance-api') ? [Number(a.heartbeatTimeout?.seconds ?? 0)] : [];
      });
    for (const sale of ['sale-immediate', 'sale-async-callback', 'sale-unregistered-item']) {
      expect(heartbeats(`1.5.4/${sale}`).length, `1.5.4/${sale} calls the service`).toBeGreaterThan(0);
      expect(heartbeats(`1.5.4/${sale}`).every((seconds) => seconds === 10)).toBe(true);
      expect(heartbeats(`1.5.1/${sale}`).every((seconds) => seconds === 0)).toBe(true);
    }
  });

  it('holds a 1.5.1 signed sale parked for a retry only on its credit note’s refused item check, Temporal’s cancel refused', () => {
    const events = stored.find((h) => h.workflowId === '1.5.1/sale-credit-note-item-check-refused')?.history.events;
    expect(events, 'the 1.5.1 history is recorded').toBeDefined();
    expect(patchIdsOf(events!)).toContain(SIGNED_ITEM_CHECK_PATCH);
    expect(events!.some((e) => e.workflowExecutionCancelRequestedEventAttributes)).toBe(true);
    expect(events!.some((e) => e.workflowExecutionCompletedEventAttributes)).toBe(false);
  });

  it('holds the tenants worker’s placements: the shared queue keyed by the window, a window’s own queue keyed by the business, a refusal then a retry', () => {
    const history = (id: string) => {
      const found = stored.find((h) => h.workflowId === `1.0.0/${id}`);
      expect(found, `1.0.0/${id} is recorded`).toBeDefined();
      return found!.history.events ?? [];
    };
    const scheduled = (id: string) =>
      history(id).flatMap((e) => {
        const a = e.activityTaskScheduledEventAttributes;
        return a
          ? [{ activity: a.activityType?.name, queue: a.taskQueue?.name ?? '', fairnessKey: a.priority?.fairnessKey }]
          : [];
      });
    const applications = (id: string) =>
      history(id).flatMap((e) => {
        const payload = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.Application;
        return payload ? [defaultPayloadConverter.fromPayload(payload)] : [];
      });
    const placementFailures = (id: string) =>
      history(id).flatMap((e) => {
        const failure =
          e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
            ? e.markerRecordedEventAttributes.failure
            : undefined;
        return failure ? [failure.applicationFailureInfo?.type] : [];
      });

    for (const id of ['sale-tenant-shared-queue', 'sale-tenant-own-queue', 'sale-tenant-not-served-then-retried']) {
      expect(scheduled(id).length, id).toBeGreaterThan(0);
    }

    // One business in the window: the shared compliance queue, the window (the service's application id) as key.
    const shared = scheduled('sale-tenant-shared-queue');
    expect(
      shared.every((a) => a.queue.endsWith('.compliance-api') && a.fairnessKey === DEMO.applications.other),
      JSON.stringify(shared),
    ).toBe(true);
    expect(applications('sale-tenant-shared-queue')).toEqual(['other']);

    // The retail window serves two businesses: its own queue, each business its own key.
    const own = scheduled('sale-tenant-own-queue');
    expect(
      own.every(
        (a) =>
          a.queue.endsWith(`.compliance-api.${DEMO.applications.retail}`) && a.fairnessKey === DEMO.businesses.mombasa,
      ),
      JSON.stringify(own),
    ).toBe(true);
    expect(applications('sale-tenant-own-queue')).toEqual(['retail']);

    // Refused while no entry served the business, placed again on the operator's retry.
    expect(placementFailures('sale-tenant-not-served-then-retried')).toEqual([FAILURE_TYPES.businessNotServed]);
    const retried = scheduled('sale-tenant-not-served-then-retried');
    expect(
      retried.every((a) => a.queue.endsWith('.compliance-api') && a.fairnessKey === DEMO.applications.other),
      JSON.stringify(retried),
    ).toBe(true);
    expect(applications('sale-tenant-not-served-then-retried')).toEqual(['other']);
  });

  it('replays every recorded history with the current workflows without a nondeterminism error', async () => {
    const results = await replayAll(await workflowBundle(), stored);
    expect(results.map((r) => [r.workflowId, r.error?.message ?? null])).toEqual(
      stored.map((h) => [h.workflowId, null]),
    );
  }, 60_000);

  it('reports a workflow whose activities were reordered as nondeterministic (the replay test can fail)', async () => {
    const reordered = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./fixtures/reordered-sale.ts', import.meta.url)),
      logger: testLogger,
    });
    const sales = stored.filter((h) => h.workflowType === 'saleWorkflow');
    const results = await replayAll(reordered, sales);
    expect(results).toHaveLength(sales.length);
    for (const result of results) {
      expect(result.error, result.workflowId).toBeInstanceOf(DeterminismViolationError);
      expect(result.error?.message, result.workflowId).toMatch(/Nondeterminism error/);
    }
    // Where the recorded sale signed in one activity, the changed one creates the sale first.
    const immediate = results.find((r) => r.workflowId === '1.0.0/sale-immediate');
    expect(immediate?.error?.message).toMatch(/'signSale' does not match .* 'createSale'/);
  }, 60_000);
});
