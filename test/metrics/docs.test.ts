/**
 * Renamed metrics keep the docs in step: every series of the catalogue is described in docs/metrics.md, and no
 * README or docs page names an `etims_` series the worker does not publish.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/catalogue.js';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const scraped = Object.entries(METRICS).map(([name, spec]) => (spec.kind === 'counter' ? `${name}_total` : name));

describe('the metrics docs', () => {
  it('describe every series the worker publishes', () => {
    const doc = read('docs/metrics.md');
    for (const name of scraped) expect(doc, name).toContain(`\`${name}\``);
  });

  it('name no series the worker does not publish', () => {
    const pages = [
      'README.md',
      ...readdirSync(new URL('docs/', root))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const known = new Set(scraped);
    for (const page of pages) {
      // The table of renamed series names the old ones on purpose.
      const text = read(page).split('## Renamed series')[0]!;
      // A recording rule (level:metric:operations) is named after the series it reads, not one the worker publishes.
      for (const [found] of text.matchAll(/(?<![:\w])etims_[a-z0-9_]*[a-z0-9](?![a-z0-9_]*:)/g)) {
        // A histogram's or counter's sample suffixes, and a series named in a PromQL expression, are the same series.
        const series = found.replace(/_(bucket|sum|count)$/, '');
        expect(known.has(series), `${page} names ${found}`).toBe(true);
      }
    }
  });
});
