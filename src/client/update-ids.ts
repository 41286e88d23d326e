import type { SaleState } from '../contracts/sale.js';

/**
 * For an action an operator may need more than once in a sale's life: the id names the situation acted on (the
 * latest history entry), so two clicks on one situation act once, and a later situation acts again.
 */
export function situationalUpdateId(action: string, state: SaleState): string {
  const latest = state.history.at(-1);
  return `${action}:${state.history.length}@${latest?.at ?? 'start'}`;
}
