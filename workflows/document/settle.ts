import { ActivityFailure, CancellationScope, condition, isCancellation, sleep } from '@temporalio/workflow';
import type { AuthorityCause, SubmissionResult } from '../../activities/types.js';
import { isInFlight, isSigned, isTransientCause } from '../../src/contracts/compliance-rules.js';
import type { FiscalDocument } from '../../src/contracts/sale.js';
import { applicationFailure, type DocumentProcess } from './process.js';

type Outcome = FiscalDocument | { problem: { code: string; message: string } };

/** Unpolled while a callback is due: the authority usually decides in seconds; a lost callback costs this much. */
const CALLBACK_GRACE_MS = 10_000;

/**
 * The process's fiscal document (the sale, or a refund's credit note) on its way to a signed receipt: each
 * submission, the callbacks heard since, and the automatic retries of transient refusals.
 */
export class Submission {
  private hintsAtSubmission: number;
  private transientRetries = 0;

  constructor(private readonly process: DocumentProcess) {
    this.hintsAtSubmission = process.inbox.callbackHints;
  }

  /** Submits, then follows the document until signed: in flight, its outcome; refused, its recovery. */
  async settle(submit: () => Promise<SubmissionResult>): Promise<FiscalDocument> {
    const { record, outage, settings } = this.process;
    let result = await this.send(submit);
    for (;;) {
      let document = result.document;
      record.show(document);
      if (isInFlight(document.status)) {
        // Taken, not decided: a probe is no proof the authority is back until its outcome says so.
        await outage.submissionInFlight();
        record.enter('awaiting_outcome');
        const callbackSince = result.outcomeAnnounced ? this.hintsAtSubmission : undefined;
        const outcome = await this.awaitOutcome(document.id, callbackSince);
        if ('problem' in outcome && outcome.problem.code === 'outcome_timeout' && !settings.outcomeTimeoutParks) {
          const { code: cause, message } = outcome.problem;
          await outage.waitOut({ side: 'authority', cause, message });
          continue;
        }
        if ('problem' in outcome) {
          await this.process.awaitOperator(outcome.problem.code, outcome.problem.message);
          result = await this.confirmOrResubmit(document.id);
          continue;
        }
        document = outcome;
        record.show(document);
      }
      if (isSigned(document)) {
        record.unpark();
        await outage.ended();
        return document;
      }
      result = await this.recover(document, result.outcome === 'rejected' ? result.causes : []);
    }
  }

  /** Counted once per submission, not per try of it through an outage. */
  private send(call: () => Promise<SubmissionResult>): Promise<SubmissionResult> {
    const { process } = this;
    return process.parkOnRefusal(() => {
      if (process.kind === 'sale') process.record.state.submissions++;
      this.hintsAtSubmission = process.inbox.callbackHints;
      return process.outage.ride(call);
    });
  }

  private resubmit(documentId: string): Promise<SubmissionResult> {
    return this.send(() => this.process.api.retrySale({ businessId: this.process.businessId, documentId }));
  }

  /** After an operator's retry the document may have settled meanwhile: read it, and resubmit only a failure. */
  private async confirmOrResubmit(documentId: string): Promise<SubmissionResult> {
    const { document } = await this.read(documentId);
    if (document.status === 'failed') return this.resubmit(documentId);
    const outcome = isSigned(document) ? 'signed' : isInFlight(document.status) ? 'in_flight' : 'unknown';
    return { outcome, httpStatus: 200, replayed: false, document, causes: [] };
  }

  /** A document that failed: items registered, an outage waited out, retried, or a person asked. */
  private async recover(document: FiscalDocument, causes: AuthorityCause[]): Promise<SubmissionResult> {
    const { process } = this;
    const { record, outage } = process;
    if (document.status === 'completed') {
      // Accepted, but without the receipt values that prove it (C4): never counted as signed.
      const kind = process.kind === 'sale' ? 'sale' : 'credit note';
      await process.awaitOperator(
        'receipt_missing',
        `the service reports ${kind} ${document.id} completed but sent no receipt values: ` +
          'check it in the dashboard, then retry to read it again',
      );
      return this.confirmOrResubmit(document.id);
    }
    // Failed while in flight: the read shows no cause then (C60), so it counts as transient.
    const transient = causes.every((c) => isTransientCause(c.code));
    const said = document.error || causes.map((c) => c.message ?? c.code).join('; ');
    const unregistered = transient ? [] : await process.unregisteredItems();
    if (unregistered.length > 0) {
      await process.registerItems(unregistered);
      record.enter('retrying');
      return this.resubmit(document.id);
    }
    const retryLimit = process.settings.transientRetryLimit;
    if (transient && retryLimit === undefined) {
      const cause = causes[0]?.code ?? 'authority_unavailable';
      await outage.waitOut({ side: 'authority', cause, message: said || 'failed in flight' });
      return this.resubmit(document.id);
    }
    await outage.ended();
    if (transient && retryLimit !== undefined && this.transientRetries < retryLimit) {
      this.transientRetries++;
      record.enter('retrying');
      await sleep(Math.min(2 ** this.transientRetries, 300) * 1000);
      return this.resubmit(document.id);
    }
    const reason = said || 'failed by the authority without a reason';
    const retries = `${this.transientRetries} automatic ${this.transientRetries === 1 ? 'retry' : 'retries'}`;
    await process.awaitOperator(
      causes[0]?.code ?? 'authority_failed',
      transient ? `${reason} (still failing after ${retries})` : reason,
    );
    this.transientRetries = 0;
    record.enter('retrying');
    return this.resubmit(document.id);
  }

  /** By callback or polling, whichever comes first; with `callbackSince`, polling starts once the callback is due. */
  private async awaitOutcome(documentId: string, callbackSince: number | undefined): Promise<Outcome> {
    const { inbox, api, settings, businessId } = this.process;
    const timedOut = {
      problem: { code: 'outcome_timeout', message: `no outcome from the authority within ${settings.outcomeTimeout}` },
    };
    const deadline = Date.now() + settings.outcomeTimeoutMs;
    if (
      callbackSince !== undefined &&
      (await condition(() => inbox.callbackHints > callbackSince, Math.min(CALLBACK_GRACE_MS, deadline - Date.now())))
    ) {
      const { document } = await this.read(documentId);
      if (!isInFlight(document.status)) return document;
    }
    for (;;) {
      const hintsBefore = inbox.callbackHints;
      const scope = new CancellationScope();
      const poll = scope.run(() => api.awaitDocumentOutcome({ businessId, documentId }, deadline - Date.now()));
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
        const refusal = applicationFailure(error);
        if (refusal?.nonRetryable) return { problem: { code: refusal.type ?? 'error', message: refusal.message } };
        return timedOut;
      }
      // A callback is a hint: stop polling and confirm by reading the document.
      scope.cancel();
      await poll.catch(() => undefined);
      const { document } = await this.read(documentId);
      if (!isInFlight(document.status)) return document;
      if (Date.now() >= deadline) return timedOut;
    }
  }

  /** A read of the document that waits out an outage and parks on a refusal (a key revoked mid-rotation). */
  private read(documentId: string): Promise<{ document: FiscalDocument }> {
    return this.process.call(() => this.process.api.getDocument({ businessId: this.process.businessId, documentId }));
  }
}
