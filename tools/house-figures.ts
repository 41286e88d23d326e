/**
 * The house's figures, measured from the tracked code: how large the product is (code, comments, blank lines), what
 * the sale and the refund reach inside workflows/, the worker's start-up room, the import circles among the product's
 * files and the arrows between its top-level folders that run back up. `npm run figures -- [--json] [--repo <dir>]`.
 *
 * The product: every tracked `.ts` outside test/, tools/, sandbox/, examples/, deploy/, docs/ and the root's own
 * files. Imports are read by TypeScript's own pre-processor (static, type-only and literal dynamic imports).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const NOT_PRODUCT = ['test/', 'tools/', 'sandbox/', 'examples/', 'deploy/', 'docs/'];
/** Words of a comment that tells the code's history instead of explaining it. */
const HISTORY_WORDS = /before 2\.x|older workers|started before|recorded by older|used to/i;

export type ImportGraph = Map<string, Set<string>>;
export interface LineKinds {
  code: number;
  comment: number;
  blank: number;
}

export function productFiles(root: string): string[] {
  const tracked = execFileSync('git', ['ls-files', '*.ts'], { cwd: root, encoding: 'utf8' }).split('\n');
  return tracked.filter((file) => file.includes('/') && !NOT_PRODUCT.some((prefix) => file.startsWith(prefix)));
}

/** Each file's relative imports that name another file of `files` (`x.js` is `x.ts`, a folder its `index.ts`). */
export function importGraph(root: string, files: readonly string[]): ImportGraph {
  const known = new Set(files);
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const targets = new Set<string>();
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const base = normalize(join(dirname(file), fileName));
      const found = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')].find((c) =>
        known.has(c),
      );
      if (found !== undefined) targets.add(found);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Every file reached from `entries` through imports, keeping to files under `within`. */
export function reach(graph: ImportGraph, entries: readonly string[], within: string): string[] {
  const seen = new Set<string>();
  const next = [...entries];
  for (let file = next.pop(); file !== undefined; file = next.pop()) {
    if (seen.has(file) || !file.startsWith(within)) continue;
    seen.add(file);
    next.push(...(graph.get(file) ?? []));
  }
  return [...seen].sort();
}

/** Files importing each other around a loop: each strongly connected set of two files or more (Tarjan). */
export function circles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const circle: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      circle.push(member);
      if (member === file) break;
    }
    if (circle.length > 1) found.push(circle.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/**
 * Arrows between top-level folders that import each other: of the two directions, the one fewer files take runs back
 * up (the folders' floors follow the many). Each with the files that take it.
 */
export function arrowsBackUp(graph: ImportGraph): Array<{ from: string; to: string; files: string[] }> {
  const top = (file: string) => file.split('/')[0]!;
  const importers = new Map<string, Set<string>>();
  for (const [file, targets] of graph)
    for (const target of targets) {
      if (top(file) === top(target)) continue;
      const key = `${top(file)} ${top(target)}`;
      importers.set(key, (importers.get(key) ?? new Set()).add(file));
    }
  const back: Array<{ from: string; to: string; files: string[] }> = [];
  for (const [key, files] of importers) {
    const [from, to] = key.split(' ') as [string, string];
    const other = importers.get(`${to} ${from}`)?.size ?? 0;
    if (other > files.size || (other === files.size && from > to)) back.push({ from, to, files: [...files].sort() });
  }
  return back;
}

/** Each comment (once, by its start) and each token with text, as TypeScript parses the file. */
function walk(
  source: ts.SourceFile,
  onComment: (from: number, to: number) => void,
  onToken?: (from: number, to: number) => void,
): void {
  const { text } = source;
  const seen = new Set<number>();
  const visit = (node: ts.Node): void => {
    // A doc comment is read as a comment beside its node's first token.
    if (ts.isJSDoc(node)) return;
    const children = node.getChildren(source);
    if (children.length > 0) return children.forEach(visit);
    for (const range of [
      ...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []),
      ...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? []),
    ])
      if (!seen.has(range.pos)) {
        seen.add(range.pos);
        onComment(range.pos, range.end);
      }
    if (node.kind !== ts.SyntaxKind.EndOfFileToken && node.getEnd() > node.getStart(source))
      onToken?.(node.getStart(source), node.getEnd());
  };
  visit(source);
}

const parse = (text: string) => ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true);

/** Lines of code, of comment only, and blank. */
export function lineKinds(text: string): LineKinds {
  const source = parse(text);
  const lines: Array<'code' | 'comment'> = [];
  const lineAt = (position: number) => ts.getLineAndCharacterOfPosition(source, position).line;
  const mark = (kind: 'code' | 'comment') => (from: number, to: number) => {
    for (let line = lineAt(from); line <= lineAt(Math.max(from, to - 1)); line++)
      if (lines[line] !== 'code') lines[line] = kind;
  };
  walk(source, mark('comment'), mark('code'));
  const kinds: LineKinds = { code: 0, comment: 0, blank: 0 };
  const lineCount = source.getLineStarts().length - (text.endsWith('\n') ? 1 : 0);
  for (let line = 0; line < lineCount; line++) kinds[lines[line] ?? 'blank']++;
  return kinds;
}

/** Comment lines with the words of one that narrates history, each `line: text` (1-based), to be read. */
export function historyComments(text: string): string[] {
  const source = parse(text);
  const found: string[] = [];
  walk(source, (from, to) => {
    const first = ts.getLineAndCharacterOfPosition(source, from).line;
    text
      .slice(from, to)
      .split('\n')
      .forEach((line, i) => HISTORY_WORDS.test(line) && found.push(`${first + i + 1}: ${line.trim()}`));
  });
  return found;
}

export function houseFigures(root: string) {
  const files = productFiles(root);
  const text = new Map(files.map((file) => [file, readFileSync(join(root, file), 'utf8')]));
  const sized = (subset: readonly string[]) => {
    const kinds: LineKinds = { code: 0, comment: 0, blank: 0 };
    for (const file of subset)
      for (const [kind, n] of Object.entries(lineKinds(text.get(file)!))) kinds[kind as keyof LineKinds] += n;
    return { files: subset.length, lines: kinds.code + kinds.comment + kinds.blank, ...kinds };
  };
  const graph = importGraph(root, files);
  const startUp = files.filter(
    (f) => f === 'src/cli/worker.ts' || f.startsWith('src/worker/') || f.startsWith('worker/'),
  );
  return {
    product: sized(files),
    saleOwnCode: sized(files.filter((f) => f === 'workflows/sale.ts' || f.startsWith('workflows/sale/'))),
    saleAndRefundReach: sized(reach(graph, ['workflows/sale.ts', 'workflows/refund.ts'], 'workflows/')),
    workerStartUp: sized(startUp),
    circles: circles(graph),
    arrowsBackUp: arrowsBackUp(graph),
    historyComments: files.flatMap((file) => historyComments(text.get(file)!).map((line) => `${file}:${line}`)),
  };
}

function main(): void {
  // `--repo <dir>`: another checkout (an older commit's worktree, to compare).
  const { values } = parseArgs({ options: { json: { type: 'boolean' }, repo: { type: 'string' } }, strict: true });
  const root = values.repo ?? fileURLToPath(new URL('..', import.meta.url));
  if (!existsSync(join(root, '.git'))) throw new Error(`--repo ${root}: not a git checkout`);
  const figures = houseFigures(root);
  if (values.json) return console.log(JSON.stringify(figures, null, 2));
  const row = (name: string, s: ReturnType<typeof houseFigures>['product']) =>
    `${name.padEnd(34)} ${String(s.lines).padStart(6)} lines in ${String(s.files).padStart(3)} files ` +
    `(code ${s.code}, comments ${s.comment}, blank ${s.blank})`;
  console.log(row('product', figures.product));
  console.log(row("the sale's own code", figures.saleOwnCode));
  console.log(row('what sale and refund reach', figures.saleAndRefundReach));
  console.log(row('worker start-up', figures.workerStartUp));
  console.log(`${'import circles'.padEnd(34)} ${figures.circles.length}`);
  for (const circle of figures.circles) console.log(`  ${circle.join(' ↔ ')}`);
  console.log(`${'arrows back up'.padEnd(34)} ${figures.arrowsBackUp.length}`);
  for (const { from, to, files } of figures.arrowsBackUp) console.log(`  ${from} → ${to}: ${files.join(', ')}`);
  const words = figures.historyComments;
  console.log(
    `${"comments with history's words".padEnd(34)} ${words.length} (read them: a word can serve the present)`,
  );
  for (const line of words) console.log(`  ${line}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main();
  } catch (err) {
    console.error(`figures: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
}
