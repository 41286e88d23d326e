/** A business's place on the fleet's compliance budget, from a local activity: a workflow input never names a key. */

/** A single-key worker's application: not written as a search attribute. */
export const SINGLE_KEY_APPLICATION = 'default';

export interface BudgetPlacement {
  /** Null when no application serves the business any more (work under way then fails `business_not_served`). */
  application: string | null;
  /** The application whose rate window the calls spend, or the business itself when one application is the queue. */
  fairnessKey: string;
  /** The window's own queue, when it serves several businesses. */
  ownQueue?: string;
  /** Work that paces itself reads its slots from it. */
  requestsPerMinute?: number;
}

export interface PlaceBusinessInput {
  businessId: string;
  /** New work is refused unless an application serves the business now; work under way keeps its application. */
  newWork: boolean;
}
