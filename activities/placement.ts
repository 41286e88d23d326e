import type { BudgetPlacement, PlaceBusinessInput } from '../src/contracts/budget-placement.js';
import type { ActivityDeps } from './deps.js';

/**
 * Where a business's compliance calls stand on the fleet's budget, from the tenants this process serves now: a local
 * activity, so no key enters the history. An unserved business refuses new work (`business_not_served`).
 */
export function createPlacementActivities(deps: Pick<ActivityDeps, 'services'>) {
  return {
    async placeBusiness(input: PlaceBusinessInput): Promise<BudgetPlacement> {
      return deps.services.place(input.businessId, { newWork: input.newWork });
    },
  };
}
