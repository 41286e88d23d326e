import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal SDK's native bridge crashes inside worker threads: every test file runs in a forked process.
    pool: 'forks',
    // Most files spend their time waiting on a Temporal server, a sandbox or a timer, not on the CPU: three files at a
    // time even on 2 cores (vitest's default would be one). There, one file at a time took 910 s, two 561–645 s
    // (the CPU 1.2 to 1.5 cores busy), three 469 s (1.64 cores busy), every test passing.
    maxWorkers: Math.max(3, availableParallelism() - 1),
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
