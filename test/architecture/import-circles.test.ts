import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ROOMS = ['src', 'workflows', 'activities'];
const IMPORT = /(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]/gs;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Relative imports between the product's files, type-only ones included: a circle of types is a circle too. */
function importGraph(): Map<string, string[]> {
  const files = new Set(ROOMS.flatMap(sources));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets = [...text.matchAll(IMPORT)]
      .map((m) => normalize(join(dirname(file), m[1]!)).replace(/\.js$/, '.ts'))
      .filter((target) => files.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) component.push(w);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("the product's imports", () => {
  it('form no circle in src/, workflows/ and activities/', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    expect(circles(graph)).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  // The worker assembles its activities: the one arrow from src/ up to a room above it (docs/architecture.md).
  it('has src/ import workflows/ and activities/ only where the worker assembles them', () => {
    const upward = [...importGraph()]
      .filter(([file]) => file.startsWith('src/'))
      .flatMap(([file, targets]) =>
        targets.filter((t) => t.startsWith('activities/') || t.startsWith('workflows/')).map((t) => `${file} → ${t}`),
      );
    expect(upward.sort()).toEqual([
      'src/worker/workers.ts → activities/index.ts',
      'src/worker/workers.ts → activities/item-registry.ts',
    ]);
  });
});
