/**
 * Under tsx a worker takes the bundle an earlier start made from the same sources: kept by a digest of every source a
 * workflow can import and of the installed packages, so any change to them makes a new one.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { sourceDigest, workflowBundleFor } from '../../src/temporal/workflow-bundle.js';

const root = mkdtempSync(join(tmpdir(), 'bundle-sources-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe('the digest of the sources a bundle is made from', () => {
  it('changes with a workflow, a source of src/ added or changed, and the lockfile; not otherwise', () => {
    write('workflows/index.ts', 'export const a = 1;\n');
    write('src/contracts/sale.ts', 'export const b = 2;\n');
    write('package-lock.json', '{"lockfileVersion":3}\n');
    write('README.md', 'not a source\n');
    const first = sourceDigest(root);
    expect(first).toMatch(/^[0-9a-f]{32}$/);
    expect(sourceDigest(root)).toBe(first);
    write('README.md', 'still not a source\n');
    expect(sourceDigest(root)).toBe(first);

    const digests = new Set([first]);
    for (const [path, text] of [
      ['workflows/index.ts', 'export const a = 3;\n'],
      ['src/contracts/sale.ts', 'export const b = 4;\n'],
      ['src/contracts/new.ts', 'export const c = 5;\n'],
      ['src/codec/failure-converter.cjs', 'module.exports = {};\n'],
      ['package-lock.json', '{"lockfileVersion":3,"packages":{}}\n'],
    ] as const) {
      write(path, text);
      const digest = sourceDigest(root);
      expect(digests.has(digest), path).toBe(false);
      digests.add(digest);
    }
  });
});

describe('a start under tsx', () => {
  it('takes the bundle made from these sources by an earlier one', { timeout: 60_000 }, async () => {
    const lines: Array<{ msg: string; codePath?: string }> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
          done();
        },
      }),
    );
    await workflowBundleFor(logger);
    lines.length = 0;
    const again = await workflowBundleFor(logger);
    expect(lines.map((l) => l.msg)).toEqual(['workflow bundle loaded (made from these sources before)']);
    expect('codePath' in again && again.codePath).toBe(lines[0]!.codePath);
    const code = readFileSync(lines[0]!.codePath!, 'utf8');
    expect(code).toContain('saleWorkflow');
    expect(code.length).toBeGreaterThan(1_000_000);
  });
});
