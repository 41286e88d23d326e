import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  arrowsBackUp,
  circles,
  historyComments,
  importGraph,
  lineKinds,
  productFiles,
  reach,
  type ImportGraph,
} from '../../tools/house-figures.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Relative imports between the product's files, type-only ones included: a circle of types is a circle too. */
const productGraph = () => importGraph(ROOT, productFiles(ROOT));

const graphOf = (edges: Record<string, string[]>): ImportGraph =>
  new Map(Object.entries(edges).map(([file, targets]) => [file, new Set(targets)]));

describe("the product's imports", () => {
  it('form no circle in src/, workflows/ and activities/', () => {
    const graph = productGraph();
    expect(graph.size).toBeGreaterThan(100);
    expect(circles(graph)).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const graph = graphOf({ 'a.ts': ['b.ts'], 'b.ts': ['c.ts'], 'c.ts': ['a.ts'], 'd.ts': ['a.ts'] });
    expect(circles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  // The worker assembles its activities: the one arrow from src/ up to a room above it (docs/architecture.md).
  it('has src/ import workflows/ and activities/ only where the worker assembles them', () => {
    const upward = [...productGraph()]
      .filter(([file]) => file.startsWith('src/'))
      .flatMap(([file, targets]) =>
        [...targets]
          .filter((t) => t.startsWith('activities/') || t.startsWith('workflows/'))
          .map((t) => `${file} → ${t}`),
      );
    expect(upward.sort()).toEqual([
      'src/worker/workers.ts → activities/index.ts',
      'src/worker/workers.ts → activities/item-registry.ts',
    ]);
    expect(arrowsBackUp(productGraph())).toEqual([{ from: 'src', to: 'activities', files: ['src/worker/workers.ts'] }]);
  });
});

describe('the house figures (tools/house-figures.ts)', () => {
  it('names the direction fewer files take between two folders that import each other', () => {
    const graph = graphOf({
      'low/a.ts': [],
      'low/b.ts': ['high/y.ts'],
      'high/x.ts': ['low/a.ts'],
      'high/y.ts': ['low/a.ts'],
      'apart/z.ts': ['low/a.ts'],
    });
    expect(arrowsBackUp(graph)).toEqual([{ from: 'low', to: 'high', files: ['low/b.ts'] }]);
  });

  it('reaches through imports, within the folder it is kept to', () => {
    const graph = graphOf({
      'w/sale.ts': ['w/engine.ts', 'src/contract.ts'],
      'w/engine.ts': ['w/keys.ts'],
      'w/keys.ts': [],
      'w/other.ts': ['w/keys.ts'],
      'src/contract.ts': ['w/other.ts'],
    });
    expect(reach(graph, ['w/sale.ts'], 'w/')).toEqual(['w/engine.ts', 'w/keys.ts', 'w/sale.ts']);
  });

  it('counts lines of code, comment and blank as the parser reads them, templates and strings included', () => {
    const text = [
      '/**',
      ' * A doc comment.',
      ' */',
      'const url = "http://x"; // a trailing comment is on a line of code',
      '',
      'const shown = `${url}',
      '// inside a template: code',
      '`;',
      '  ',
      '/* one */ /* two */',
      'export { shown };',
      '',
    ].join('\n');
    expect(lineKinds(text)).toEqual({ code: 5, comment: 4, blank: 2 });
  });

  it("lists the comment lines with history's words, never a string's", () => {
    const text = [
      '// Kept because older workers send it.',
      'const said = "used to be"; /* recorded by older builds */',
      '/** Not started before its deadline. */',
      'export { said };',
    ].join('\n');
    expect(historyComments(text)).toEqual([
      '1: // Kept because older workers send it.',
      '2: /* recorded by older builds */',
      '3: /** Not started before its deadline. */',
    ]);
  });
});
