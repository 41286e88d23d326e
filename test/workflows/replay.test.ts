/**
 * Every workflow of this version replays against the histories recorded from real runs of it (test/histories/<version>/,
 * written by tools/record-histories.ts): a change to a workflow shows here as the histories it no longer makes. Every
 * workflow runs pinned to the Worker Deployment Version it started on, so an execution of an older version is replayed
 * by that version's workers, never by these: only the current version's paths are kept, and none carries a patch.
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
import { testLogger } from '../helpers/temporal.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';

const historiesDir = fileURLToPath(new URL('../histories/', import.meta.url));
const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

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

async function replayAll(
  bundle: Awaited<ReturnType<typeof workflowBundle>>,
  histories: StoredHistory[],
): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) results.push(result);
  return results;
}

describe('replay of recorded histories', () => {
  it('holds this version’s histories alone, of every workflow', () => {
    expect(new Set(stored.map((h) => h.workflowId.split('/')[0]))).toEqual(new Set([version]));
    const types = new Set(stored.map((h) => h.workflowType));
    expect([...types].toSorted()).toEqual([
      'catalogueChunkWorkflow',
      'catalogueImportWorkflow',
      'fiscalDayWorkflow',
      'itemRegistrationWorkflow',
      'outageWatchWorkflow',
      'purchasesBookWorkflow',
      'purchasesSyncWorkflow',
      'reconciliationWorkflow',
      'refundWorkflow',
      'saleWorkflow',
      'stockInMappingsWorkflow',
      'stockInWorkflow',
      'stockLedgerWorkflow',
      'syncBatchWorkflow',
    ]);
  });

  it('holds no patch marker: every workflow runs pinned to the version it started on', () => {
    const markers = stored.flatMap((h) =>
      (h.history.events ?? []).flatMap((e) =>
        e.markerRecordedEventAttributes?.details?.['patch-data'] ? [h.workflowId] : [],
      ),
    );
    expect(markers).toEqual([]);
  });

  it('holds every run of an execution that continued as new: a deploy can find any of them running', () => {
    const started = (h: StoredHistory) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const runIds = new Set(stored.map((h) => started(h)?.originalExecutionRunId));
    const continued = stored.flatMap((h) => {
      const next = h.history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      return next ? [{ workflowId: h.workflowId, workflowType: h.workflowType, next }] : [];
    });
    expect(continued.filter((c) => !runIds.has(c.next)).map((c) => c.workflowId)).toEqual([]);
    expect(new Set(continued.map((c) => c.workflowType))).toEqual(
      new Set(['fiscalDayWorkflow', 'purchasesSyncWorkflow', 'syncBatchWorkflow']),
    );
  });

  it("holds the day book's paths: closed by an operator, a till's close matched, an amendment, a busy day's second run", () => {
    const day = eventsOf(`${version}/fiscal-day-closed-amended`);
    const updates = day.flatMap(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? [],
    );
    expect(updates).toEqual(expect.arrayContaining(['closeFiscalDay', 'matchTillClose']));
    const activities = day.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    // The evidence looked at and the close, the till's sales, then the amendment: delivered twice in all.
    expect(activities).toEqual(['recoverFiscalDay', 'deliverFiscalDay', 'findTillSales', 'deliverFiscalDay']);
    expect(day.some((e) => e.timerStartedEventAttributes)).toBe(true);
    const busy = eventsOf(`${version}/fiscal-day-busy-run-1`);
    expect(busy.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeDefined();
    expect(eventsOf(`${version}/fiscal-day-busy-run-2`).length).toBeGreaterThan(0);
  });

  it('holds a sale that closes once signed and its stock handed over, and its refund as a workflow of its own', () => {
    const sale = eventsOf(`${version}/sale-refunded`);
    expect(sale.at(-1)?.workflowExecutionCompletedEventAttributes).toBeDefined();
    // Nothing waits for a refund: no timer, no update in the sale's history.
    expect(sale.some((e) => e.timerStartedEventAttributes)).toBe(false);
    expect(sale.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toBe(false);

    const refund = eventsOf(`${version}/refund`);
    const activities = refund.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(activities).toEqual(expect.arrayContaining(['findSignedSale', 'createCreditNote']));
    expect(
      refund.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'refund'),
    ).toBe(true);
    expect(refund.at(-1)?.workflowExecutionCompletedEventAttributes).toBeDefined();

    // Past its window: refused, filing nothing, the workflow failed so that a corrected refund may start again.
    const refused = eventsOf(`${version}/refund-refused`);
    const failure = refused.at(-1)?.workflowExecutionFailedEventAttributes?.failure;
    expect(failure?.applicationFailureInfo?.type).toBe(FAILURE_TYPES.invalidOperation);
    expect(failure?.message).toMatch(/refund window of the sale ended/);
    expect(refused.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'createCreditNote')).toBe(
      false,
    );
  });

  it('holds both outages waited out by the sales themselves, on their application’s watch', () => {
    const authority = eventsOf(`${version}/sale-authority-outage`);
    expect(
      authority.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'retrySale').length,
    ).toBeGreaterThanOrEqual(1);
    expect(authority.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toBe(false);
    const service = eventsOf(`${version}/sale-service-outage`);
    expect(service.some((e) => e.activityTaskFailedEventAttributes)).toBe(true);
    for (const sale of [authority, service])
      expect(sale.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'outageNews')).toBe(true);
    const watch = eventsOf(`${version}/outage-watch`);
    const sent = watch.flatMap((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName ?? []);
    expect(sent).toContain('outageNews');
  });

  it('holds the stock ledger’s paths: a lost answer settled by a probe, lines merged, a refused movement re-sent on an operator’s word', () => {
    const events = eventsOf(`${version}/stock-ledger`);
    const movements = events.flatMap((e) => {
      const payload = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0];
      return payload
        ? [defaultPayloadConverter.fromPayload(payload) as { action: string; quantity: number; referenceId: string }]
        : [];
    });
    expect(movements.filter((m) => m.quantity === 0).length).toBeGreaterThanOrEqual(3);
    expect(movements.some((m) => m.referenceId.startsWith('stk:') && m.quantity > 0)).toBe(true);
    expect(events.filter((e) => e.activityTaskFailedEventAttributes).length).toBeGreaterThanOrEqual(1);
    expect(
      events.some(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'settleMovement',
      ),
    ).toBe(true);
  });

  it('holds the tenants worker’s placements: the shared queue keyed by the window, a window’s own queue keyed by the business, a refusal then a retry', () => {
    const history = (id: string) => {
      const found = stored.find((h) => h.workflowId === `${version}/${id}`);
      expect(found, `${version}/${id} is recorded`).toBeDefined();
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

    for (const id of ['sale-tenant-shared-queue', 'sale-tenant-own-queue', 'sale-tenant-not-served-then-served']) {
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

    // Refused while no entry served the business, placed by itself once a reload served it.
    expect(placementFailures('sale-tenant-not-served-then-served')).toEqual([FAILURE_TYPES.businessNotServed]);
    const retried = scheduled('sale-tenant-not-served-then-served');
    expect(
      retried.every((a) => a.queue.endsWith('.compliance-api') && a.fairnessKey === DEMO.applications.other),
      JSON.stringify(retried),
    ).toBe(true);
    expect(applications('sale-tenant-not-served-then-served')).toEqual(['other']);
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
    const immediate = results.find((r) => r.workflowId === `${version}/sale-immediate`);
    expect(immediate?.error?.message).toMatch(/'signSale' does not match .* 'createSale'/);
  }, 60_000);
});
