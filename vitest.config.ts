import { defineConfig } from 'vitest/config';

/**
 * Two lanes. `unit` (`*.unit.test.ts` and the architecture tests): no Postgres, Redis or embedded engine, only
 * servers a test starts itself on 127.0.0.1; under a minute, for day-to-day work (`npm run test:unit`).
 * `service`: every other suite, each against a real service with its own databases and key prefix. `npm test`
 * runs both.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // One process per test file: the embedded engine binds one data directory per process.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        // Pure tests: one module graph per worker is enough (no file leaves state behind for the next).
        test: { name: 'unit', include: ['src/**/*.unit.test.ts', 'agent/**/*.unit.test.ts', 'test/architecture/**/*.test.ts'], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'service',
          include: ['src/**/*.test.ts', 'test/compat/**/*.test.ts', 'test/browser/**/*.test.ts', 'console/test/**/*.test.ts'],
          exclude: ['src/**/*.unit.test.ts', '**/node_modules/**'],
        },
      },
    ],
  },
});
