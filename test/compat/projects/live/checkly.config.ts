import { defineConfig } from 'checkly'

// A sample project the compatibility suite runs with `checkly test`: one check that passes and one that fails,
// both against a server the test starts on 127.0.0.1 (LIVE_URL).
export default defineConfig({
  projectName: 'Live runs',
  logicalId: 'live-runs',
  checks: { frequency: 10, locations: ['eu-west-1'], tags: ['live'], runtimeId: '2025.04', checkMatch: '**/__checks__/**/*.check.ts' },
  cli: { runLocation: 'eu-west-1' },
})
