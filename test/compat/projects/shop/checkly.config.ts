import { defineConfig } from 'checkly'

// A sample project the compatibility suite deploys with the anchor's CLI. Every URL names a server the test
// starts on 127.0.0.1 (SHOP_URL); the suite varies the project between deploys through SHOP_* variables.
export default defineConfig({
  projectName: process.env.SHOP_PROJECT_NAME ?? 'Shop monitoring',
  logicalId: process.env.SHOP_PROJECT_ID ?? 'shop-monitoring',
  repoUrl: 'https://git.example.test/shop',
  checks: {
    frequency: 10,
    locations: ['eu-west-1'],
    tags: ['shop'],
    runtimeId: '2025.04',
    checkMatch: '**/__checks__/**/*.check.ts',
  },
  cli: { runLocation: 'eu-west-1' },
})
