/**
 * Where a business's compliance calls stand on the fleet's budget (issue 16). Workflows learn it once, from a local
 * activity (the worker knows which application serves a business; a workflow input never names a key), and every
 * compliance activity they schedule carries its fairness key: the compliance queue holds each key to its own rate,
 * so each application is held to its own budget whatever the number of worker processes.
 *
 * Workflow code imports this module: types and constants only.
 */

/** The application of a single-key worker (its one key is tenant `default`): not written as a search attribute. */
export const SINGLE_KEY_APPLICATION = 'default';

export interface BudgetPlacement {
  /**
   * The tenants file's name of the application that serves the business (`default` for a single-key worker); null
   * when none does any more and the call is for work already under way (its calls then fail with
   * `business_not_served`, as they would have without placement).
   */
  application: string | null;
  /**
   * The fairness key of the business's compliance calls: the service application whose rate window they spend, when
   * several applications share the queue; the business itself when one application is the whole queue's budget
   * (its businesses then share that budget fairly).
   */
  fairnessKey: string;
  /**
   * Set when the business's window serves several businesses: the window's name, whose own compliance queue
   * (windowComplianceTaskQueue) is held to its budget while the businesses, as fairness keys, share it fairly.
   * Absent: the shared compliance queue, where the fairness key is the window.
   */
  ownQueue?: string;
}

export interface PlaceBusinessInput {
  businessId: string;
  /**
   * A new piece of work (a sale about to be filed): refused with `business_not_served` unless an application serves
   * the business now. Work already under way (a sale filed before its business was removed, a scheduled sync) is
   * placed with the application that served it while that application's key is still held.
   */
  newWork: boolean;
}
