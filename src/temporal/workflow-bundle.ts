/**
 * The workflow code the workers run: bundled by `npm run build` for the compiled worker (the image), or under tsx
 * (`npm start`, the tests) by the first start on these sources. Why prebuilt: docs/deployment.md, "The production
 * image".
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle, type WorkflowBundleOption } from '@temporalio/worker';
import type { Logger } from 'pino';
import { failureConverterPath } from '../codec/data-converter.js';
import { tracingPlugins } from './tracing.js';

/** Where `npm run build` writes the bundles, beside the compiled code. */
const PREBUILT_DIR = fileURLToPath(new URL('../../workflow-bundles/', import.meta.url));
const MANIFEST = 'manifest.json';
/** Under tsx, each bundle made from the sources, kept by their digest (as bundlers keep theirs in node_modules). */
const SOURCE_CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/workflow-bundles/', import.meta.url));

/** Plain histories, or encrypted ones (the failure converter that puts messages into the encrypted payload). */
export type BundleVariant = 'plain' | 'encrypted';

interface Manifest {
  /** Of every file the bundle is made from (`bundleInputs`): a bundle is used only with the code it was built from. */
  inputs: string;
  bundles: Record<BundleVariant, { file: string; bytes: number }>;
}

/** The workflow sources, as TypeScript under tsx or as compiled JavaScript. */
export function workflowSources(): { workflowsPath: string; preloadModules: string[] } {
  const path = ['../../workflows/index.ts', '../../workflows/index.js']
    .map((candidate) => fileURLToPath(new URL(candidate, import.meta.url)))
    .find((candidate) => existsSync(candidate));
  if (path === undefined) throw new Error('workflows/index.(ts|js) not found next to src/');
  // Every workflow module, and what it imports, evaluated once per workflow thread instead of once per workflow: the
  // SDK shares what is loaded before any workflow runs. Why: docs/benchmarks.md, "Workflow modules shared".
  return { workflowsPath: path, preloadModules: [path] };
}

/** Bundled as the Worker would, but the bundler's twenty lines of webpack statistics go to debug. */
export async function bundleWorkflows(logger: Logger, dataConverter?: DataConverter): Promise<WorkflowBundle> {
  const started = performance.now();
  const bundlerLogger = new DefaultLogger('DEBUG', ({ level, message, meta }) => {
    const fields = { component: 'workflow-bundler', ...meta };
    logger[level === 'WARN' ? 'warn' : level === 'ERROR' ? 'error' : 'debug'](fields, message);
  });
  const bundle = await bundleWorkflowCode({
    ...workflowSources(),
    logger: bundlerLogger,
    plugins: tracingPlugins(),
    ...(dataConverter?.payloadConverterPath ? { payloadConverterPath: dataConverter.payloadConverterPath } : {}),
    ...(dataConverter?.failureConverterPath ? { failureConverterPath: dataConverter.failureConverterPath } : {}),
  });
  logger.info(
    {
      sizeMB: Number((bundle.code.length / 2 ** 20).toFixed(2)),
      seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
    },
    'workflow bundle built',
  );
  return bundle;
}

/**
 * A digest of what a compiled bundle is made from: the compiled workflows, the shared modules, the failure converter,
 * and the versions of the package and of the SDK's workflow runtime. Computed the same at build and at start.
 */
export function bundleInputs(): string {
  const { workflowsPath } = workflowSources();
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const files = [
    ...walk(dirname(workflowsPath), '.js'),
    ...workflowSources().preloadModules,
    fileURLToPath(new URL('../codec/failure-converter.cjs', import.meta.url)),
  ];
  const hash = createHash('sha256');
  for (const file of [...new Set(files)].sort()) hash.update(`${relative(root, file)}\0`).update(readFileSync(file));
  hash.update(`sdk ${sdkVersion()}\0`);
  return hash.digest('hex').slice(0, 32);
}

function walk(dir: string, ...extensions: string[]): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? walk(join(dir, entry.name), ...extensions)
      : extensions.some((extension) => entry.name.endsWith(extension))
        ? [join(dir, entry.name)]
        : [],
  );
}

function sdkVersion(): string {
  const require = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { version: string };
  const workflowPackage = fileURLToPath(import.meta.resolve('@temporalio/workflow/package.json'));
  return require(workflowPackage).version;
}

/** `npm run build`: both variants, with the digest of what they were made from. */
export async function writePrebuiltBundles(logger: Logger): Promise<Manifest> {
  if (!workflowSources().workflowsPath.endsWith('.js')) throw new Error('prebuilt bundles are made from compiled code');
  mkdirSync(PREBUILT_DIR, { recursive: true });
  const bundles = {} as Manifest['bundles'];
  for (const variant of ['plain', 'encrypted'] as const) {
    const { code } = await bundleWorkflows(
      logger,
      variant === 'encrypted' ? { failureConverterPath: failureConverterPath() } : undefined,
    );
    const file = `${variant}.js`;
    writeFileSync(join(PREBUILT_DIR, file), code);
    bundles[variant] = { file, bytes: Buffer.byteLength(code) };
  }
  const manifest: Manifest = { inputs: bundleInputs(), bundles };
  writeFileSync(join(PREBUILT_DIR, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * The compiled worker loads the bundle `npm run build` made, when it was made from this very code; otherwise (a
 * tracing exporter that adds its interceptors, a converter of its own, a bundle missing or stale) it bundles now, and
 * says why. Under tsx it takes the bundle an earlier start made from the same sources, or makes it.
 */
export async function workflowBundleFor(logger: Logger, dataConverter?: DataConverter): Promise<WorkflowBundleOption> {
  const variant: BundleVariant = dataConverter?.failureConverterPath ? 'encrypted' : 'plain';
  const customised = bundleCustomised(dataConverter);
  if (!workflowSources().workflowsPath.endsWith('.js'))
    return customised === undefined
      ? sourceBundle(logger, variant, dataConverter)
      : bundleWorkflows(logger, dataConverter);
  const unusable = customised ?? prebuiltUnusable();
  if (unusable === undefined) {
    const manifest = JSON.parse(readFileSync(join(PREBUILT_DIR, MANIFEST), 'utf8')) as Manifest;
    const codePath = join(PREBUILT_DIR, manifest.bundles[variant].file);
    logger.info({ variant, codePath, inputs: manifest.inputs }, 'workflow bundle loaded (built with the code)');
    return { codePath };
  }
  logger.warn({ reason: unusable }, 'bundling the workflows at start');
  return bundleWorkflows(logger, dataConverter);
}

/**
 * Under tsx (`npm start`, `npm run worker` in development, the tests' and the bench's worker processes) the bundle of
 * these very sources: made by the first start and kept under a digest of every source a workflow can import and of
 * the installed packages, so a process started again on unchanged code spends no CPU bundling (seconds on 2 cores,
 * which a till beside a restarting worker would share). Written whole, then renamed: starts side by side never read a
 * part of one.
 */
async function sourceBundle(
  logger: Logger,
  variant: BundleVariant,
  dataConverter: DataConverter | undefined,
): Promise<WorkflowBundleOption> {
  const codePath = join(SOURCE_CACHE_DIR, `${variant}-${sourceDigest()}.js`);
  if (existsSync(codePath)) {
    logger.info({ variant, codePath }, 'workflow bundle loaded (made from these sources before)');
    return { codePath };
  }
  const bundle = await bundleWorkflows(logger, dataConverter);
  try {
    mkdirSync(SOURCE_CACHE_DIR, { recursive: true });
    const partial = `${codePath}.${process.pid}.partial`;
    writeFileSync(partial, bundle.code);
    renameSync(partial, codePath);
    pruneSourceCache();
  } catch (err) {
    logger.debug({ err, codePath }, 'workflow bundle not kept for the next start');
  }
  return bundle;
}

/** The newest few bundles stay (a checkout switching branches), and any made in the last hour (a start may read it). */
function pruneSourceCache(keep = 6, youngMs = 3_600_000): void {
  const bundles = readdirSync(SOURCE_CACHE_DIR)
    .filter((name) => name.endsWith('.js'))
    .map((name) => ({ path: join(SOURCE_CACHE_DIR, name), at: statSync(join(SOURCE_CACHE_DIR, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { path, at } of bundles.slice(keep)) if (Date.now() - at > youngMs) rmSync(path, { force: true });
}

/** The sources under tsx: every file of workflows/ and src/ (what workflow code may import), and the lockfile. */
export function sourceDigest(root = fileURLToPath(new URL('../../', import.meta.url))): string {
  const files = [...walk(join(root, 'workflows'), '.ts'), ...walk(join(root, 'src'), '.ts', '.cjs')];
  const hash = createHash('sha256');
  for (const file of files.sort()) hash.update(`${relative(root, file)}\0`).update(readFileSync(file));
  for (const file of ['package-lock.json', 'tsconfig.json'].map((f) => join(root, f)))
    if (existsSync(file)) hash.update(`${relative(root, file)}\0`).update(readFileSync(file));
  hash.update(`sdk ${sdkVersion()}\0`);
  return hash.digest('hex').slice(0, 32);
}

/** What makes a bundle other than the project's own: it is bundled at start, never taken from a file. */
function bundleCustomised(dataConverter: DataConverter | undefined): string | undefined {
  if (tracingPlugins().length > 0) return 'tracing adds its interceptors to the bundle';
  if (dataConverter?.payloadConverterPath) return 'a payload converter of its own';
  if (dataConverter?.failureConverterPath && dataConverter.failureConverterPath !== failureConverterPath())
    return 'a failure converter of its own';
  return undefined;
}

function prebuiltUnusable(): string | undefined {
  const manifestPath = join(PREBUILT_DIR, MANIFEST);
  if (!existsSync(manifestPath)) return `no prebuilt bundle (${manifestPath}): npm run build makes it`;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  if (manifest.inputs !== bundleInputs())
    return 'the prebuilt bundle was made from other code than this (npm run build again)';
  return undefined;
}
