/**
 * The production dependency path carries neither the sandbox nor its test-only packages: they are development
 * dependencies, and the entry points a production install runs reach the sandbox only by a dynamic import
 * that SANDBOX=embedded (or the local stack) triggers.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SANDBOX_ONLY = ['pdfkit', 'qrcode', '@temporalio/testing'];
const PRODUCTION_ENTRY_POINTS = ['src/cli/worker.ts', 'src/cli/sales.ts', 'src/client/index.ts', 'src/worker/start.ts'];

/** Every file and package reached from `entry` through static imports only. */
function staticClosure(metafile: Metafile, entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of metafile.inputs[file]?.imports ?? []) {
      if (imported.kind === 'dynamic-import') continue;
      if (imported.external) seen.add(imported.path);
      else queue.push(imported.path);
    }
  }
  return seen;
}

describe('the production dependency path', () => {
  it('lists the sandbox-only packages as development dependencies only', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    for (const name of SANDBOX_ONLY) {
      expect(pkg.dependencies[name], name).toBeUndefined();
      expect(pkg.devDependencies[name], name).toBeDefined();
      expect(lock.packages[`node_modules/${name}`]?.dev, `${name} in package-lock.json`).toBe(true);
    }
    expect(pkg.dependencies['@temporalio/envconfig']).toBe('1.24.0');
  });

  it('reaches neither the sandbox nor its packages by a static import from the production entry points', async () => {
    const result = await build({
      absWorkingDir: root,
      entryPoints: PRODUCTION_ENTRY_POINTS,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      outdir: path.join(os.tmpdir(), 'production-deps-unused'),
      logLevel: 'silent',
    });
    // The sandbox is in the build (reached by the dynamic import), and the walk does reach the services module.
    expect(Object.keys(result.metafile.inputs)).toContain('sandbox/server.ts');
    expect(staticClosure(result.metafile, 'src/cli/worker.ts')).toContain('src/services/endpoints.ts');
    for (const entry of PRODUCTION_ENTRY_POINTS) {
      const reached = [...staticClosure(result.metafile, entry)];
      expect(reached.filter((p) => p.startsWith('sandbox/')), entry).toEqual([]);
      for (const name of SANDBOX_ONLY) expect(reached.filter((p) => p === name || p.startsWith(`${name}/`)), entry).toEqual([]);
    }
  });
});
