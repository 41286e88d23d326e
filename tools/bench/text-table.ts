/** Plain-text tables for a terminal, shared by the bench's report and the demo's summary. */

export type Cell = string | number | boolean | undefined;

/** A plain-text table (monospace), numbers right-aligned; a column per key met in any row, in order of appearance. */
export function formatTable(rows: ReadonlyArray<Record<string, Cell>>): string {
  if (rows.length === 0) return '(nothing)';
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const text = (c: Cell) =>
    c === undefined ? '' : typeof c === 'number' ? String(Number.isInteger(c) ? c : Number(c.toFixed(3))) : String(c);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c]).length)));
  const line = (cells: string[], numeric: boolean[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const header = line(
    columns,
    columns.map(() => false),
  );
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const body = rows.map((r) =>
    line(
      columns.map((c) => text(r[c])),
      columns.map((c) => typeof r[c] === 'number'),
    ),
  );
  return [header, rule, ...body].join('\n');
}
