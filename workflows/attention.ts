import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { AttentionReason, NeedsAttention } from '../src/contracts/search-attributes.js';

/**
 * `NeedsAttention` and `AttentionReason` of a workflow that asks a person: one writer, which sends only what changed
 * since it was last written (read back at start: the attributes survive continue-as-new; one never written is sent).
 */
export class Attention {
  private needed = workflowInfo().typedSearchAttributes.get(NeedsAttention);
  private reason = workflowInfo().typedSearchAttributes.get(AttentionReason);

  /** `reason` undefined: the workflow keeps no reason, only whether a person is needed. */
  write(needed: boolean, reason?: string): void {
    const changed: SearchAttributeUpdatePair[] = [];
    if (needed !== this.needed) changed.push({ key: NeedsAttention, value: needed });
    if (reason !== undefined && reason !== this.reason) changed.push({ key: AttentionReason, value: reason });
    this.needed = needed;
    this.reason = reason ?? this.reason;
    if (changed.length > 0) upsertSearchAttributes(changed);
  }

  /** Both attributes as given, to be written with others in one upsert. */
  pairs(needed: boolean, reason: string): SearchAttributeUpdatePair[] {
    this.needed = needed;
    this.reason = reason;
    return [
      { key: NeedsAttention, value: needed },
      { key: AttentionReason, value: reason },
    ];
  }
}

/**
 * A list a person works through (lines to map, movements to settle): `NeedsAttention` with `reason` while it is not
 * empty, and the list under `title` in the Temporal UI's current details, each written only when it changes.
 */
export function attentionList(reason: string, title: string, list: () => string): () => void {
  const attention = new Attention();
  let shown: string | undefined;
  return () => {
    const details = list();
    if (details === shown) return;
    // Nothing to ask before, nothing now: a list that never needed anyone writes no attributes.
    if ((shown ?? '') !== '' || details !== '') attention.write(details !== '', details === '' ? '' : reason);
    shown = details;
    setCurrentDetails(details === '' ? '' : `${title}\n\n${details}`);
  };
}
