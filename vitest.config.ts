import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal SDK's native bridge crashes inside worker threads: every test file runs in a forked process.
    pool: 'forks',
    // Most files spend their time waiting on a Temporal server, a sandbox or a timer, not on the CPU: two files at a
    // time even on 2 cores (vitest's default would be one), which took the suite from 910 s to 656 s there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
