import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal SDK's native bridge crashes inside worker threads: every test file runs in a forked process.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
