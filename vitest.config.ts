import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/architecture/**/*.test.ts', 'test/compat/**/*.test.ts', 'test/browser/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // One process per test file: the embedded engine binds one data directory per process.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
