import { seededRandom } from '../../sandbox/shared/faults.js';

export { seededRandom };

/**
 * A sub-seed per purpose (fault plan, sales, sandbox rolls), so adding a draw to one never shifts another's
 * sequence: a problem found with a seed stays reproducible while the run's code grows.
 */
export function deriveSeed(seed: number, label: string): number {
  // FNV-1a over the text: small, stable, good enough to decorrelate the streams.
  let hash = 0x811c9dc5;
  for (const char of `${seed >>> 0}:${label}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Draws of one seeded stream. */
export class Dice {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  /** In [0, 1). */
  roll(): number {
    return this.next();
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** An integer from min to max, both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(values: readonly T[]): T {
    if (values.length === 0) throw new Error('pick from an empty list');
    return values[Math.floor(this.next() * values.length)]!;
  }

  /** A copy in a seeded order (Fisher–Yates). */
  shuffle<T>(values: readonly T[]): T[] {
    const out = [...values];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

/** A fresh seed when none is given: printed first, so any run can be repeated. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 0x1_0000_0000) >>> 0;
}
