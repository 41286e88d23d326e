/**
 * What a quantity on hand proves about movements whose answers were lost: the ledger is its items' only writer, so
 * the next answer must fit one outcome "each applied or not", then the answering movement. The service clamps at 0
 * (C28), which can make two outcomes end alike: then nothing is proven. `applied[i]`: the i-th, in sending order.
 */
export type Evidence = { decided: true; applied: boolean[] } | { decided: false; reason: string };

/** More uncertain movements than this on one item are not worth 2^n outcomes: an operator decides. */
const MAX_UNCERTAIN = 6;

function afterMovement(onHand: number, delta: number): number {
  // The service's own rounding (4 places) so decimals compare exactly.
  return Math.round(Math.max(0, onHand + delta) * 10_000) / 10_000;
}

/** `before`: the quantity before the first uncertain movement; quantities signed (DEDUCT negative), probe 0. */
export function weighEvidence(
  before: number,
  uncertain: readonly number[],
  answered: number,
  onHand: number,
): Evidence {
  if (uncertain.length > MAX_UNCERTAIN)
    return { decided: false, reason: `${uncertain.length} movements of the item were uncertain at once` };
  const matches: boolean[][] = [];
  let reachedZero = false;
  for (let mask = 0; mask < 1 << uncertain.length; mask++) {
    const applied = uncertain.map((_, i) => (mask & (1 << i)) !== 0);
    let q = before;
    let clamped = false;
    const move = (delta: number) => {
      clamped ||= q + delta < 0;
      q = afterMovement(q, delta);
    };
    uncertain.forEach((delta, i) => applied[i] && move(delta));
    move(answered);
    if (q === onHand) {
      matches.push(applied);
      reachedZero ||= clamped;
    }
  }
  if (matches.length === 1) return { decided: true, applied: matches[0]! };
  if (matches.length === 0)
    return {
      decided: false,
      reason:
        `the quantity on hand (${onHand}) fits no outcome of this ledger's movements: ` +
        'something else moved the item at this branch',
    };
  const why = reachedZero
    ? 'the item reached 0, where the service stops deducting'
    : 'its uncertain movements cancel each other out';
  return { decided: false, reason: `the quantity on hand (${onHand}) fits more than one outcome: ${why}` };
}
