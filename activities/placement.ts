import type { BudgetPlacement, PlaceBusinessInput } from '../src/contracts/budget-placement.js';
import type { ActivityDeps } from './deps.js';

/**
 * Where a business's compliance calls stand on the fleet's budget, from the tenants this process serves now. Run as
 * a local activity on the workflow queue: it asks no service, and a workflow learns its business's application
 * without a key ever entering its history. A business no application serves refuses new work with
 * `business_not_served` (non-retryable: only a change of the tenants makes it pass).
 */
export function createPlacementActivities(deps: Pick<ActivityDeps, 'services'>) {
  return {
    async placeBusiness(input: PlaceBusinessInput): Promise<BudgetPlacement> {
      return deps.services.place(input.businessId, { newWork: input.newWork });
    },
  };
}
