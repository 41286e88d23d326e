import { ApplicationFailure, condition } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../definitions.js';
import type { SaleContext } from './context.js';
import { parkOnRefusal } from './operator.js';

/** Registers what is missing through one registration workflow per item; returns the stock-tracked items. */
export async function ensureItemsRegistered(ctx: SaleContext): Promise<Set<string>> {
  const { input, record, api } = ctx;
  record.enter('registering_items');
  const itemIds = [...new Set(input.lines.map((l) => l.itemId))];
  const check = await parkOnRefusal(ctx, () => api.bookkeeping.checkItems({ businessId: input.businessId, itemIds }), { cancellable: true });
  record.countCalls(check.apiCalls);
  await registerItems(ctx, check.items.filter((i) => !i.registered).map((i) => i.itemId));
  return new Set(check.items.filter((i) => i.stockTracked).map((i) => i.itemId));
}

/**
 * Asks the registration workflow of each item to register it and tell this sale, then waits for every answer.
 * An item that still needs something parks the sale until an operator fixes it; one never fixed fails the sale.
 */
export async function registerItems(ctx: SaleContext, itemIds: string[]): Promise<void> {
  if (itemIds.length === 0) return;
  const { input, record, inbox, api } = ctx;
  for (const itemId of itemIds) {
    inbox.registrations.delete(itemId);
    await api.coordination.requestItemRegistration({
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
      record.failed();
      throw ApplicationFailure.nonRetryable(`items were not fixed in time: ${failed.join(', ')}`, FAILURE_TYPES.itemRegistrationFailed);
    }
    const waiting = outcomes.filter((o) => o.status === 'needs_fixing').map((o) => o.itemId);
    if (waiting.length === 0) break;
    record.park('item_needs_fixing', `the service says these items still need something: ${waiting.join(', ')}`, ['itemFixed'], waiting);
    // Only a newer outcome for a waiting item moves on: the registration workflow tries again once fixed.
    for (const id of waiting) inbox.registrations.delete(id);
  }
  record.unpark();
}
