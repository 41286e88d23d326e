import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/contracts/duration.js';

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['30 seconds', 30_000],
    ['1 second', 1_000],
    ['250ms', 250],
    ['5 mins', 300_000],
    ['1.5h', 5_400_000],
    ['24 hours', 86_400_000],
    ['24 Hours', 86_400_000],
    ['7d', 604_800_000],
    ['2 weeks', 1_209_600_000],
    ['1y', 31_557_600_000],
    ['.5m', 30_000],
  ])('reads %j as %d ms, as Temporal does', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['24', '', 'h', ' 1h', '1h ', '-1h', '1 fortnight', '1h30m', '1,5h', 'P1D'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
