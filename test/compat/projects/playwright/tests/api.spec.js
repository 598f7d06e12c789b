const { test, expect } = require('@playwright/test');

test('health answers ok', async ({ request }) => {
  const res = await request.get(`${process.env.TARGET_URL}/ok`);
  expect(res.status()).toBe(200);
  expect((await res.json()).status).toBe('ok');
});

test('orders are up', async ({ request }) => {
  const res = await request.get(`${process.env.TARGET_URL}/status/503`);
  expect(res.status(), 'orders endpoint status').toBe(200);
});
