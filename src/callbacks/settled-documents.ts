import { LRUCache } from 'lru-cache';

/** Hints come seconds after the answer; a busy process's sales of ten minutes, bounded whatever the rate. */
const REMEMBERED_MS = 10 * 60_000;
const MAX_REMEMBERED = 50_000;

/** Documents signed in an answer this process handed to the workflow: their callbacks save the sale a workflow task. */
export class SettledDocuments {
  private readonly signed = new LRUCache<string, true>({ max: MAX_REMEMBERED, ttl: REMEMBERED_MS });

  signedInAnswer(documentId: string): void {
    this.signed.set(documentId, true);
  }

  has(documentId: string): boolean {
    return this.signed.has(documentId);
  }
}
