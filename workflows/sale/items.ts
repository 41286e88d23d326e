import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { CreateSaleInput, SignSaleInput, SubmissionResult } from '../../activities/types.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { callService } from './call.js';
import type { DocumentContext } from './context.js';
import { serviceAnswered } from './outage.js';

/** The sale's stock-tracked items, and the ledger the signing activity handed their lines to. */
export interface StockSigned {
  tracked: Set<string>;
  ledgerWorkflowId: string | undefined;
}

/** Files the sale with its items checked in one activity; unregistered items are registered, then it files again. */
export async function fileWithItemsChecked(
  ctx: DocumentContext,
  filing: CreateSaleInput,
  handOver: SignSaleInput['handOver'],
  stock: StockSigned,
): Promise<SubmissionResult> {
  const { record, api } = ctx;
  const checked = await api.signSale({ ...filing, itemIds: itemIdsOf(ctx), handOver });
  stock.tracked = new Set(checked.items.filter((i) => i.stockTracked).map((i) => i.itemId));
  stock.ledgerWorkflowId = checked.handedOver?.ledgerWorkflowId;
  if (checked.submission) return checked.submission;
  await serviceAnswered(ctx);
  record.enter('registering_items');
  const unregistered = checked.items.filter((i) => !i.registered).map((i) => i.itemId);
  await registerItems(ctx, unregistered);
  record.enter('creating_sale');
  return api.createSale(filing);
}

/** The items a fresh read shows unregistered: no cause code names a missing item, so the list decides. */
export async function unregisteredItems(ctx: DocumentContext): Promise<string[]> {
  const { input, api } = ctx;
  const check = await callService(ctx, () =>
    api.checkItems({ businessId: input.businessId, itemIds: itemIdsOf(ctx), fresh: true }),
  );
  return check.items.filter((i) => !i.registered).map((i) => i.itemId);
}

function itemIdsOf(ctx: DocumentContext): string[] {
  return [...new Set(ctx.input.lines.map((l) => l.itemId))];
}

/** Each item's registration workflow tells this sale; an item needing a fix parks it, one never fixed fails it. */
export async function registerItems(ctx: DocumentContext, itemIds: string[]): Promise<void> {
  if (itemIds.length === 0) return;
  const { input, record, inbox, api } = ctx;
  for (const itemId of itemIds) {
    inbox.registrations.delete(itemId);
    await api.requestItemRegistration({
      businessId: input.businessId,
      itemId,
      waiterWorkflowId: ctx.workflowId,
      taskQueue: ctx.taskQueue,
      fixDeadline: ctx.settings.itemFixDeadline,
      ...(input.branchId ? { branchId: input.branchId } : {}),
    });
  }
  record.note(`registering ${itemIds.join(', ')}`);
  for (;;) {
    await condition(() => itemIds.every((id) => inbox.registrations.has(id)));
    const outcomes = itemIds.map((id) => inbox.registrations.get(id)!);
    const failed = outcomes.filter((o) => o.status === 'failed').map((o) => o.itemId);
    if (failed.length > 0) {
      record.failed(FAILURE_TYPES.itemRegistrationFailed);
      throw ApplicationFailure.nonRetryable(
        `items were not fixed in time: ${failed.join(', ')}`,
        FAILURE_TYPES.itemRegistrationFailed,
      );
    }
    const waiting = outcomes.filter((o) => o.status === 'needs_fixing').map((o) => o.itemId);
    if (waiting.length === 0) break;
    record.park(
      'item_needs_fixing',
      `the service says these items still need something: ${waiting.join(', ')}`,
      ['itemFixed'],
      waiting,
    );
    // Only a newer outcome for a waiting item moves on: the registration workflow tries again once fixed.
    for (const id of waiting) inbox.registrations.delete(id);
  }
  record.unpark();
}
