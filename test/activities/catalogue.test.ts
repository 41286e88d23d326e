import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import type { CatalogueRow } from '../../src/contracts/catalogue-import.js';
import { itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import { createActivities } from '../../activities/index.js';
import { closeTestEnv, getTestEnv, uniqueTaskQueue } from '../helpers/temporal.js';
import { DEMO, runActivity, useHarnessFactory, useSandbox } from './helpers.js';

/**
 * createCatalogueItem over real HTTP against the sandbox, handing items to their registration on the run's real
 * Temporal dev server. No worker polls the task queues: a registration stays as signal-with-start left it.
 */
const sandbox = useSandbox();
const newHarness = useHarnessFactory(sandbox);
const business = DEMO.businesses.nairobi;
const started: WorkflowHandle[] = [];

afterAll(async () => {
  await Promise.allSettled(started.map((handle) => handle.terminate('test finished')));
  await closeTestEnv();
});

async function harness() {
  const env = await getTestEnv();
  return newHarness({ deps: { temporal: { client: env.client } } });
}

const row = (overrides: Partial<CatalogueRow> = {}): CatalogueRow => ({
  externalId: `CAT-ACT-${randomUUID().slice(0, 8)}`,
  name: 'Maize flour 2kg',
  taxTypeCode: 'B',
  unitPrice: 180,
  classificationCode: '5016150100',
  productTypeCode: '2',
  ...overrides,
});

const decode = (payloads: Payload[] | null | undefined) =>
  (payloads ?? []).map((payload) => defaultPayloadConverter.fromPayload(payload));

/** The item's registration as signal-with-start left it, or undefined when none was started. */
async function registrationOf(itemId: string) {
  const env = await getTestEnv();
  const handle = env.client.workflow.getHandle(itemRegistrationWorkflowId(business, itemId));
  try {
    const description = await handle.describe();
    started.push(handle);
    const { events } = await handle.fetchHistory();
    const start = events?.[0]?.workflowExecutionStartedEventAttributes;
    return {
      taskQueue: description.taskQueue,
      args: decode(start?.input?.payloads),
      waiters: (events ?? []).flatMap((e) => decode(e.workflowExecutionSignaledEventAttributes?.input?.payloads)),
    };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

describe('createCatalogueItem', () => {
  it('hands an item it created unregistered to its registration, the importing workflow as its waiter', async () => {
    const { activities } = await harness();
    const taskQueue = uniqueTaskQueue('catalogue-activity');
    const waitFor = { workflowId: `chunk-${randomUUID().slice(0, 8)}`, taskQueue };
    const item = await runActivity(activities.createCatalogueItem, {
      businessId: business,
      row: row({ branchId: 'br_nairobi_cbd' }),
      waitFor,
    });
    expect(item).toMatchObject({ created: true, registered: false, differs: [], registrationRequested: true });
    expect(await registrationOf(item.itemId)).toEqual({
      taskQueue,
      args: [{ businessId: business, itemId: item.itemId, branchId: 'br_nairobi_cbd' }],
      waiters: [{ workflowId: waitFor.workflowId }],
    });
  });

  /** The item's registration requested through activities whose placement gives the business `requestsPerMinute`. */
  async function holdOf(requestsPerMinute: number): Promise<number> {
    const { deps } = await harness();
    const services = {
      ...deps.services,
      place: (businessId: string, options: { newWork: boolean }) => ({
        ...deps.services.place(businessId, options),
        requestsPerMinute,
      }),
    };
    const activities = createActivities({ ...deps, services });
    const waitFor = { workflowId: `chunk-${randomUUID().slice(0, 8)}`, taskQueue: uniqueTaskQueue('catalogue') };
    const sentAt = Date.now();
    const item = await runActivity(activities.createCatalogueItem, { businessId: business, row: row(), waitFor });
    expect(item.registrationRequested).toBe(true);
    const handle = (await getTestEnv()).client.workflow.getHandle(itemRegistrationWorkflowId(business, item.itemId));
    started.push(handle);
    const at = (await handle.fetchHistory()).events?.[0]?.eventTime;
    return Number(at?.seconds ?? 0) * 1000 + (at?.nanos ?? 0) / 1e6 - sentAt;
  }

  it("holds the registration a slot of the business's budget after the creation went out, 5 s at most", async () => {
    // 30 a minute: a slot of 2 s, well clear of the creation's own time on a loaded machine.
    expect(await holdOf(30)).toBeGreaterThanOrEqual(2_000 - 50);
    // 6 a minute: a slot of 10 s, longer than a creation may take; held 5 s.
    const held = await holdOf(6);
    expect(held).toBeGreaterThanOrEqual(5_000 - 50);
    expect(held).toBeLessThan(9_000);
  });

  it('sent again (its registration could not be requested), finds the item it made and requests it once', async () => {
    const { activities } = await harness();
    const taskQueue = uniqueTaskQueue('catalogue-activity');
    const waitFor = { workflowId: `chunk-${randomUUID().slice(0, 8)}`, taskQueue };
    const same = row();
    const first = await runActivity(activities.createCatalogueItem, { businessId: business, row: same, waitFor });
    const again = await runActivity(
      activities.createCatalogueItem,
      { businessId: business, row: same, waitFor },
      { attempt: 2 },
    );
    expect(again).toMatchObject({ itemId: first.itemId, created: false, registrationRequested: true });
    const registration = await registrationOf(first.itemId);
    // One workflow: the second request signalled the same waiter into it again, which it counts once.
    expect(registration?.args).toEqual([{ businessId: business, itemId: first.itemId }]);
    expect(registration?.waiters).toEqual([{ workflowId: waitFor.workflowId }, { workflowId: waitFor.workflowId }]);
    const record = (await sandbox().inspector.itemRecords(business)).find((r) => r.id === first.itemId);
    expect(record).toMatchObject({ creations: 1 });
  });

  it('requests no registration for an item registered already, one held otherwise, or without a waiter', async () => {
    const { activities } = await harness();
    const waitFor = { workflowId: `chunk-${randomUUID().slice(0, 8)}`, taskQueue: uniqueTaskQueue('catalogue') };
    const registered = await runActivity(activities.createCatalogueItem, {
      businessId: business,
      row: { externalId: 'SKU-SUGAR-2KG', name: 'Sugar 2kg', taxTypeCode: 'B', unitPrice: 250 },
      waitFor,
    });
    expect(registered).toMatchObject({ itemId: DEMO.items.sugar, created: false, registered: true });
    expect(registered.registrationRequested).toBeUndefined();

    const held = await runActivity(activities.createCatalogueItem, {
      businessId: business,
      row: { externalId: 'SKU-MILK-500', name: 'Fresh milk 500ml', taxTypeCode: 'A', unitPrice: 70 },
      waitFor,
    });
    expect(held.differs).toEqual(['unitPrice']);
    expect(held.registrationRequested).toBeUndefined();

    const unwaited = await runActivity(activities.createCatalogueItem, { businessId: business, row: row() });
    expect(unwaited).toMatchObject({ created: true, registered: false });
    expect(unwaited.registrationRequested).toBeUndefined();
    for (const itemId of [DEMO.items.sugar, DEMO.items.milk, unwaited.itemId])
      expect(await registrationOf(itemId)).toBeUndefined();
  });
});
