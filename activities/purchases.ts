/** The supplier-invoice sync's activities; delivery runs on the workflow queue, off the rate budget. */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory, CancelledFailure } from '@temporalio/common';
import { SinkDeliveryError, type PurchaseEventSink } from '../src/purchases/event-sink.js';
import {
  PURCHASE_DELIVERY_FAILURES,
  deliveredOf,
  type DeliverPurchaseEventsInput,
  type DeliverPurchaseEventsResult,
  type DeliveryProgress,
  type ListPurchasesPageInput,
  type ListPurchasesPageResult,
  type PullPurchasesInput,
  type PullPurchasesResult,
  type PurchaseDocument,
} from '../src/contracts/purchases-sync.js';
import { callApi } from './api-call.js';
import type { ActivityDeps } from './deps.js';
import { rateLimitDelayMs } from './failures.js';

export interface PurchasesActivityDeps extends Pick<ActivityDeps, 'services' | 'logger' | 'metrics'> {
  /** Where events go; absent when PURCHASES_SINK is not set (a delivery then fails, non-retryable). */
  purchasesSink?: PurchaseEventSink;
}

/** What an event is due for: the review status, the reason a confirmation failed, the amounts. */
export function purchaseFingerprint(purchase: Pick<PurchaseDocument, 'status' | 'confirmationError' | 'totals'>) {
  const { status, confirmationError, totals } = purchase;
  const basis = JSON.stringify([status, confirmationError, totals.subtotal, totals.vat, totals.total]);
  return createHash('sha256').update(basis).digest('hex').slice(0, 12);
}

export function createPurchasesActivities(deps: PurchasesActivityDeps) {
  const { services, logger } = deps;

  return {
    /** POST /v1/purchases/pull: the service fetches the latest supplier invoices from the authority (C26). */
    async pullPurchases({ businessId }: PullPurchasesInput): Promise<PullPurchasesResult> {
      return callApi(deps, true, async (signal) => {
        const { data } = await services.compliance(businessId).pullPurchases({ businessId, signal });
        return { pulled: data.pulled ?? null };
      });
    },

    async listPurchasesPage(input: ListPurchasesPageInput): Promise<ListPurchasesPageResult> {
      return callApi(deps, true, async (signal) => {
        const { businessId, pageSize, cursor, status, fromDate, toDate } = input;
        const query = { pageSize, cursor: cursor ?? undefined, status, fromDate, toDate };
        const { data } = await services.compliance(businessId).listPurchases(query, { businessId, signal });
        return {
          // Plain data for history and the sink: the service's record as listed, its extra fields included.
          purchases: data.purchases.map((p) => ({ purchase: structuredClone(p), fingerprint: purchaseFingerprint(p) })),
          nextCursor: data.pagination.nextCursor || null,
        };
      });
    },

    /** Heartbeats the count done so a retry resumes there (receivers de-duplicate); failures carry `{delivered}`. */
    async deliverPurchaseEvents({ events }: DeliverPurchaseEventsInput): Promise<DeliverPurchaseEventsResult> {
      const context = Context.current();
      const sink = deps.purchasesSink;
      if (sink === undefined) {
        throw ApplicationFailure.create({
          type: PURCHASE_DELIVERY_FAILURES.notConfigured,
          message: 'this worker has no purchases sink: set PURCHASES_SINK',
          nonRetryable: true,
          details: [{ delivered: 0 } satisfies DeliveryProgress],
        });
      }
      let delivered = deliveredOf(context.info.heartbeatDetails, events.length);
      try {
        for (; delivered < events.length; delivered++) {
          await sink.deliver(events[delivered]!, { signal: context.cancellationSignal });
          context.heartbeat({ delivered: delivered + 1 } satisfies DeliveryProgress);
        }
      } catch (err) {
        const reason: unknown = context.cancellationSignal.reason;
        if (context.cancellationSignal.aborted && reason instanceof CancelledFailure) throw reason;
        if (!(err instanceof SinkDeliveryError)) throw err;
        const progress: DeliveryProgress = { delivered };
        if (!err.retryable) {
          logger.warn({ sink: sink.description, status: err.status, delivered, of: events.length }, err.message);
          throw ApplicationFailure.create({
            type: PURCHASE_DELIVERY_FAILURES.refused,
            message: err.message,
            nonRetryable: true,
            details: [{ ...progress, status: err.status ?? null }],
          });
        }
        logger.debug(
          { sink: sink.description, attempt: context.info.attempt, delivered, of: events.length },
          err.message,
        );
        throw ApplicationFailure.create({
          type: PURCHASE_DELIVERY_FAILURES.unavailable,
          message: err.message,
          details: [progress],
          // A sink that is down is retried quietly; the workflow warns once when it leaves events for the next sync.
          category: ApplicationFailureCategory.BENIGN,
          ...(err.retryAfterSeconds === undefined ? {} : { nextRetryDelay: rateLimitDelayMs(err.retryAfterSeconds) }),
        });
      }
      return { delivered };
    },
  };
}

export type PurchasesActivities = ReturnType<typeof createPurchasesActivities>;
