/**
 * `npm run demo`'s output: a line per path as it ends, and a closing table a person reads
 * (no `(index)` column, no quoted strings, as console.table printed).
 */
import { describe, expect, it } from 'vitest';
import { progressLine, summaryTables, verdictLine, type DemoResult } from '../../tools/local-stack/demo-output.js';

const sale: DemoResult = {
  name: 'immediate (201)',
  outcome: 'ok',
  seconds: 7.56,
  invoice: 'DEMO-X',
  receipt: 'KRACU0100000001/1',
  note: '',
};
const failed: DemoResult = {
  name: 'async, by polling',
  outcome: 'FAILED',
  seconds: 120.04,
  invoice: 'ASYNC-POLL-DEMO-X',
  note: 'timed out in step submitting',
};
const piece: DemoResult = { name: 'reconciliation', outcome: 'ok', seconds: 4.12, note: '3 matched' };

describe('demo output', () => {
  it('says per path its outcome, name and seconds on one line, names aligned', () => {
    expect(progressLine(sale, 20)).toBe('  ok          immediate (201)         7.6 s  KRACU0100000001/1');
    expect(progressLine(failed, 20)).toBe('  FAILED      async, by polling     120.0 s  timed out in step submitting');
  });

  it('closes with plain tables: no (index) column, no quotes, one row per path and piece', () => {
    const text = summaryTables([sale, failed], [piece]);
    expect(text).not.toMatch(/\(index\)|'/);
    const lines = text.split('\n');
    expect(lines[0]).toBe('Sales');
    expect(lines[1]).toMatch(/^path\s+result\s+seconds\s+invoice\s+receipt\s+note$/);
    expect(lines.find((l) => l.startsWith('immediate (201)'))).toMatch(/ok\s+7\.6\s+DEMO-X\s+KRACU0100000001\/1\s*$/);
    expect(lines).toContain('Other pieces');
    expect(lines.find((l) => l.startsWith('reconciliation'))).toMatch(/ok\s+4\.1\s+3 matched$/);
  });

  it('names the application each sale and piece went through, when the demo shows it', () => {
    const viaRetail: DemoResult = { ...sale, via: 'demo-retail (app_demo_retail)' };
    const viaOther: DemoResult = {
      ...sale,
      name: 'other merchant, immediate',
      invoice: 'KSM-DEMO-X',
      via: 'other-integrator (app_demo_other)',
    };
    expect(progressLine(viaRetail, 20)).toBe(
      '  ok          immediate (201)         7.6 s  via demo-retail (app_demo_retail)  KRACU0100000001/1',
    );

    const lines = summaryTables(
      [viaRetail, viaOther],
      [piece, { ...piece, name: 'sync batch', via: 'demo-books (app_demo)' }],
    ).split('\n');
    expect(lines[1]).toMatch(/^path\s+application\s+result\s+seconds\s+invoice\s+receipt\s+note$/);
    expect(lines.find((l) => l.startsWith('other merchant, immediate'))).toMatch(
      /other-integrator \(app_demo_other\)\s+ok\s+7\.6\s+KSM-DEMO-X/,
    );
    expect(lines.find((l) => l.startsWith('piece'))).toMatch(/^piece\s+application\s+result/);
    // A piece that names none shows a dash in the column the others fill.
    expect(lines.find((l) => l.startsWith('reconciliation'))).toMatch(/^reconciliation\s+-\s+ok/);
  });

  it('ends with a verdict that counts what did not end as expected', () => {
    expect(verdictLine([sale], [piece])).toBe('all 1 sales and 1 other pieces ended as expected');
    expect(verdictLine([sale, failed], [piece])).toBe('1 of 3 sales and pieces did not end as expected');
  });
});
