import type { DocumentContext } from './context.js';
import { parkOnRefusal } from './operator.js';
import { rideOutages } from './outage.js';

/** The one way a step calls the service: an outage is waited out, a final refusal parks for an operator. */
export function callService<T>(ctx: DocumentContext, call: () => Promise<T>): Promise<T> {
  return parkOnRefusal(ctx, () => rideOutages(ctx, call));
}
