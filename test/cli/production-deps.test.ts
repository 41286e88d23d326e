/**
 * The production dependency path carries neither the sandbox nor its test-only packages: they are development
 * dependencies, and the entry points a production install runs reach the sandbox only by a dynamic import with
 * a computed specifier (loadSandbox in src/services/endpoints.ts), which SANDBOX=embedded (or the local stack)
 * triggers and which neither a bundler nor `tsc -p tsconfig.build.json` follows. The image built from that
 * (Dockerfile, `runtime` stage) is proven by tools/check-production-image.sh; the static half of it is checked here.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SANDBOX_ONLY = ['pdfkit', 'qrcode', '@temporalio/testing'];
const PRODUCTION_ENTRY_POINTS = [
  'src/cli/worker.ts',
  'src/cli/codec-server.ts',
  'src/cli/sales.ts',
  'src/client/index.ts',
  'src/worker/process.ts',
];

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
    // Not even the dynamic import brings the sandbox into the build (its specifier is computed at run time), and
    // the walk does reach the services module that holds it.
    expect(Object.keys(result.metafile.inputs).filter((p) => p.startsWith('sandbox/'))).toEqual([]);
    expect(staticClosure(result.metafile, 'src/cli/worker.ts')).toContain('src/services/endpoints.ts');
    for (const entry of PRODUCTION_ENTRY_POINTS) {
      const reached = [...staticClosure(result.metafile, entry)];
      expect(
        reached.filter((p) => p.startsWith('sandbox/')),
        entry,
      ).toEqual([]);
      for (const name of SANDBOX_ONLY)
        expect(
          reached.filter((p) => p === name || p.startsWith(`${name}/`)),
          entry,
        ).toEqual([]);
    }
  });

  it('builds the image from the compiled product, with production dependencies only, as a non-root user', () => {
    const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
    const buildConfig = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    expect(buildConfig.include).toEqual(['src', 'workflows', 'activities']);
    // tsc copies no .cjs: the build script puts the failure converter where data-converter.ts looks for it.
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toContain('tsc -p tsconfig.build.json');
    expect(pkg.scripts.build).toContain('dist/src/codec/failure-converter.cjs');

    // The last stage (the default target) is the runtime one: tools/check-production-image.sh replays it.
    const stages = read('Dockerfile').split(/^FROM /m);
    const runtime = stages[stages.length - 1]!;
    expect(runtime).toMatch(/^\S+ AS runtime$/m);
    expect(runtime).toMatch(/^ENV NODE_ENV=production$/m);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev\b/m);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toContain('CMD ["node", "dist/src/cli/worker.js"]');
    expect(runtime).not.toMatch(/tsx|sandbox|COPY \. /);
    // V8's code for the modules, compiled at build once the compiled code is in place, read-only to the process.
    expect(runtime).toMatch(/^ENV NODE_COMPILE_CACHE=\/app\/\S+$/m);
    const compileCache = runtime.indexOf('\nRUN node dist/src/cli/compile-cache.js\n');
    expect(compileCache).toBeGreaterThan(runtime.indexOf('COPY --from=build /app/dist/src '));
    expect(compileCache).toBeLessThan(runtime.indexOf('\nUSER node\n'));

    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const pattern of ['**/.env', '**/.env.*', '.temporal', '.cache', 'node_modules', 'dist'])
      expect(ignored, pattern).toContain(pattern);
  });
});
