import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  sleep,
} from '@temporalio/workflow';
import type { AuthorityCause, SubmissionResult } from '../../activities/types.js';
import { isInFlight, isSigned, isTransientCause } from '../../src/contracts/compliance-rules.js';
import type { FiscalDocument } from '../../src/contracts/sale.js';
import { callService } from './call.js';
import type { DocumentContext } from './context.js';
import { registerItems, unregisteredItems } from './items.js';
import { awaitOperator, parkOnRefusal } from './operator.js';
import { outageEnded, rideOutages, submissionInFlight, waitOutOutage } from './outage.js';

type Outcome = FiscalDocument | { problem: { code: string; message: string } };

/** Drives the process's fiscal document (the sale, or a refund's credit note) to a signed receipt. */
export async function settleDocument(
  ctx: DocumentContext,
  submit: () => Promise<SubmissionResult>,
): Promise<FiscalDocument> {
  const { input, record, inbox, api } = ctx;
  const kind = ctx.kind === 'sale' ? 'sale' : 'credit note';
  let hintsAtSubmission = inbox.callbackHints;
  // Counted once per submission, not per try of it through an outage.
  const send = (call: () => Promise<SubmissionResult>) =>
    parkOnRefusal(ctx, () => {
      if (kind === 'sale') record.state.submissions++;
      hintsAtSubmission = inbox.callbackHints;
      return rideOutages(ctx, call);
    });
  const resubmit = (documentId: string) => send(() => api.retrySale(input.businessId, documentId));
  let transientRetries = 0;

  /** After an operator's retry the document may have settled meanwhile: read it, and resubmit only a failure. */
  async function confirmOrResubmit(documentId: string): Promise<SubmissionResult> {
    const { document } = await readDocument(ctx, documentId);
    if (document.status === 'failed') return resubmit(documentId);
    const outcome = isSigned(document) ? 'signed' : isInFlight(document.status) ? 'in_flight' : 'unknown';
    return { outcome, httpStatus: 200, replayed: false, document, causes: [] };
  }

  async function recover(document: FiscalDocument, causes: AuthorityCause[]): Promise<SubmissionResult> {
    if (document.status === 'completed') {
      // Accepted, but without the receipt values that prove it (C4): never counted as signed.
      await awaitOperator(
        ctx,
        'receipt_missing',
        `the service reports ${kind} ${document.id} completed but sent no receipt values: ` +
          'check it in the dashboard, then retry to read it again',
      );
      return confirmOrResubmit(document.id);
    }
    // Failed while in flight: the read shows no cause then (C60), so it counts as transient.
    const transient = causes.every((c) => isTransientCause(c.code));
    const said = document.error || causes.map((c) => c.message ?? c.code).join('; ');
    const unregistered = transient ? [] : await unregisteredItems(ctx);
    if (unregistered.length > 0) {
      await registerItems(ctx, unregistered);
      record.enter('retrying');
      return resubmit(document.id);
    }
    const retryLimit = ctx.settings.transientRetryLimit;
    if (transient && retryLimit === undefined) {
      const cause = causes[0]?.code ?? 'authority_unavailable';
      await waitOutOutage(ctx, { side: 'authority', cause, message: said || 'failed in flight' });
      return resubmit(document.id);
    }
    await outageEnded(ctx);
    if (transient && retryLimit !== undefined && transientRetries < retryLimit) {
      transientRetries++;
      record.enter('retrying');
      await sleep(Math.min(2 ** transientRetries, 300) * 1000);
      return resubmit(document.id);
    }
    const reason = said || 'failed by the authority without a reason';
    const retries = `${transientRetries} automatic ${transientRetries === 1 ? 'retry' : 'retries'}`;
    await awaitOperator(
      ctx,
      causes[0]?.code ?? 'authority_failed',
      transient ? `${reason} (still failing after ${retries})` : reason,
    );
    transientRetries = 0;
    record.enter('retrying');
    return resubmit(document.id);
  }

  let result = await send(submit);
  for (;;) {
    let document = result.document;
    record.show(kind, document);
    if (isInFlight(document.status)) {
      // Taken, not decided: a probe is no proof the authority is back until its outcome says so.
      await submissionInFlight(ctx);
      record.enter('awaiting_outcome');
      const callbackSince = result.outcomeAnnounced ? hintsAtSubmission : undefined;
      const outcome = await awaitOutcome(ctx, document.id, callbackSince);
      if ('problem' in outcome && outcome.problem.code === 'outcome_timeout' && !ctx.settings.outcomeTimeoutParks) {
        const { code: cause, message } = outcome.problem;
        await waitOutOutage(ctx, { side: 'authority', cause, message });
        continue;
      }
      if ('problem' in outcome) {
        await awaitOperator(ctx, outcome.problem.code, outcome.problem.message);
        result = await confirmOrResubmit(document.id);
        continue;
      }
      document = outcome;
      record.show(kind, document);
    }
    if (isSigned(document)) {
      record.unpark();
      await outageEnded(ctx);
      return document;
    }
    result = await recover(document, result.outcome === 'rejected' ? result.causes : []);
  }
}

/** Unpolled while a callback is due: the authority usually decides in seconds; a lost callback costs this much. */
const CALLBACK_GRACE_MS = 10_000;

/** By callback or polling, whichever comes first; with `callbackSince`, polling starts once the callback is due. */
async function awaitOutcome(
  ctx: DocumentContext,
  documentId: string,
  callbackSince: number | undefined,
): Promise<Outcome> {
  const { input, inbox, api } = ctx;
  const read = () => readDocument(ctx, documentId);
  const limit = input.options?.outcomeTimeout ?? '24 hours';
  const timedOut = { problem: { code: 'outcome_timeout', message: `no outcome from the authority within ${limit}` } };
  const deadline = Date.now() + ctx.settings.outcomeTimeoutMs;
  if (
    callbackSince !== undefined &&
    (await condition(() => inbox.callbackHints > callbackSince, Math.min(CALLBACK_GRACE_MS, deadline - Date.now())))
  ) {
    const { document } = await read();
    if (!isInFlight(document.status)) return document;
  }
  for (;;) {
    const hintsBefore = inbox.callbackHints;
    const scope = new CancellationScope();
    const poll = scope.run(() => api.awaitDocumentOutcome(input.businessId, documentId, deadline - Date.now()));
    const winner = await Promise.race([
      poll.then(
        (r) => ({ kind: 'polled' as const, r }),
        (error: unknown) => ({ kind: 'failed' as const, error }),
      ),
      condition(() => inbox.callbackHints > hintsBefore).then(() => ({ kind: 'hint' as const })),
    ]);
    if (winner.kind === 'polled') return winner.r.document;
    if (winner.kind === 'failed') {
      const { error } = winner;
      if (!(error instanceof ActivityFailure) || isCancellation(error)) throw error;
      // A refusal while reading (e.g. a revoked scope) is not a timeout: park with what the service said.
      if (error.cause instanceof ApplicationFailure && error.cause.nonRetryable)
        return { problem: { code: error.cause.type ?? 'error', message: error.cause.message } };
      return timedOut;
    }
    // A callback is a hint: stop polling and confirm by reading the document.
    scope.cancel();
    await poll.catch(() => undefined);
    const { document } = await read();
    if (!isInFlight(document.status)) return document;
    if (Date.now() >= deadline) return timedOut;
  }
}

/** A read of the document that waits out an outage and parks on a refusal (a key revoked mid-rotation). */
function readDocument(ctx: DocumentContext, documentId: string): Promise<{ document: FiscalDocument }> {
  return callService(ctx, () => ctx.api.getDocument(ctx.input.businessId, documentId));
}
