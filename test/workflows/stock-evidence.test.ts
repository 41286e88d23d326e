import { describe, expect, it } from 'vitest';
import { weighEvidence } from '../../workflows/stock-ledger/evidence.js';

describe('what a quantity on hand proves about lost answers', () => {
  it('decides one lost movement from a probe: applied or not', () => {
    expect(weighEvidence(100, [-3], 0, 97)).toEqual({ decided: true, applied: [true] });
    expect(weighEvidence(100, [-3], 0, 100)).toEqual({ decided: true, applied: [false] });
  });

  it('decides from the item’s next movement too (its own quantity taken into account)', () => {
    expect(weighEvidence(100, [-3], -2, 95)).toEqual({ decided: true, applied: [true] });
    expect(weighEvidence(100, [-3], 5, 105)).toEqual({ decided: true, applied: [false] });
  });

  it('decides two lost movements when their outcomes differ', () => {
    expect(weighEvidence(100, [-3, -5], 0, 95)).toEqual({ decided: true, applied: [false, true] });
  });

  it('cannot decide movements that cancel out, and says so', () => {
    const evidence = weighEvidence(100, [-3, 3], 0, 100);
    expect(evidence.decided).toBe(false);
    expect(!evidence.decided && evidence.reason).toMatch(/cancel each other out/);
  });

  it('cannot decide at 0, where the service stops deducting, and says so', () => {
    const evidence = weighEvidence(0, [-3], 0, 0);
    expect(evidence.decided).toBe(false);
    expect(!evidence.decided && evidence.reason).toMatch(/reached 0/);
  });

  it('names a quantity no outcome explains: something else moved the item', () => {
    const evidence = weighEvidence(100, [-3], 0, 92);
    expect(evidence.decided).toBe(false);
    expect(!evidence.decided && evidence.reason).toMatch(/something else moved the item/);
  });

  it('compares decimals as the service rounds them (4 places)', () => {
    expect(weighEvidence(0.3, [-0.1], 0, 0.2)).toEqual({ decided: true, applied: [true] });
  });
});
