/**
 * Where a business's compliance calls stand on the fleet's budget. Workflows learn it from a local activity (a workflow
 * input never names a key) and give every compliance activity its fairness key: the queue holds each key to its rate.
 * Workflow code imports this module: types and constants only.
 */

/** The application of a single-key worker (its one key is tenant `default`): not written as a search attribute. */
export const SINGLE_KEY_APPLICATION = 'default';

export interface BudgetPlacement {
  /**
   * The tenants file's name of the application serving the business; null when none does any more and the call is
   * for work already under way (its calls then fail with `business_not_served`).
   */
  application: string | null;
  /** The application whose rate window the calls spend, or the business itself when one application is the queue. */
  fairnessKey: string;
  /** Set when the window serves several businesses: the window's own queue, where the businesses share it fairly. */
  ownQueue?: string;
  /** The window's budget, when an application serves the business: work that paces itself reads its slots from it. */
  requestsPerMinute?: number;
}

export interface PlaceBusinessInput {
  businessId: string;
  /**
   * New work (a sale about to be filed) is refused with `business_not_served` unless an application serves the
   * business now; work under way is placed with the application that served it while its key is still held.
   */
  newWork: boolean;
}
