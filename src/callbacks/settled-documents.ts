import { LRUCache } from 'lru-cache';

/** Hints come seconds after the answer; a document is remembered for ten minutes. */
const REMEMBERED_MS = 10 * 60_000;
/** A busy process's sales of ten minutes, bounded whatever the rate. */
const MAX_REMEMBERED = 50_000;

/**
 * Documents this worker process saw signed in the answer to their creation or resubmission: the activity handed that
 * answer to its workflow, so the document's result callback tells the workflow nothing. The receiver acknowledges such
 * a callback without signalling, which saves the sale a workflow task. Only a hint is dropped: a callback that reaches
 * another process of the fleet is signalled as before.
 */
export class SettledDocuments {
  private readonly signed = new LRUCache<string, true>({ max: MAX_REMEMBERED, ttl: REMEMBERED_MS });

  signedInAnswer(documentId: string): void {
    this.signed.set(documentId, true);
  }

  has(documentId: string): boolean {
    return this.signed.has(documentId);
  }
}
