import { test, expect } from '@playwright/test'
import { HOME_TITLE } from './helpers'

test('home page', async ({ page }) => {
  await page.goto(`${process.env.SHOP_URL}/`)
  await expect(page).toHaveTitle(HOME_TITLE)
})
