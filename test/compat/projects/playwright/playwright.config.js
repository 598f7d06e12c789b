// A Playwright project the compatibility suite runs with the anchor's reporter. No browser: the tests use the
// `request` fixture against a server the test starts on 127.0.0.1 (TARGET_URL).
const { defineConfig } = require('@playwright/test');
const { createChecklyReporter } = require('@checkly/playwright-reporter');

module.exports = defineConfig({
  testDir: './tests',
  workers: 1,
  use: { trace: 'on' },
  reporter: [createChecklyReporter({ sessionName: 'Shop API suite' })],
});
