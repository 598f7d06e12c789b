import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A subscriber's confirm and unsubscribe links carry a MAC of the subscription's id and the link's purpose,
 * keyed by the service's own secret (service_secrets `status-page-links`): nothing to store, nothing to guess,
 * and a link for one subscription or purpose opens no other.
 */
export type LinkPurpose = 'confirm' | 'unsubscribe';

export function linkToken(secret: Buffer, purpose: LinkPurpose, subscriptionId: string): string {
  return createHmac('sha256', secret).update(`${purpose}:${subscriptionId.toLowerCase()}`).digest('base64url');
}

export function validLinkToken(secret: Buffer, purpose: LinkPurpose, subscriptionId: string, token: unknown): boolean {
  if (typeof token !== 'string' || token.length > 100) return false;
  const want = Buffer.from(linkToken(secret, purpose, subscriptionId));
  const got = Buffer.from(token);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Where a page lives for someone reading a mail: /status/{url} under the service's address (PUBLIC_URL). */
export function pageAddress(publicUrl: string, page: { url: string }): string {
  return `${publicUrl}/status/${encodeURIComponent(page.url)}`;
}

/** Where a page's feed points readers: its own domain (with PUBLIC_URL's scheme) when it has one, else its path. */
export function feedAddress(publicUrl: string, page: { url: string; custom_domain: string | null }): string {
  return page.custom_domain ? `${new URL(publicUrl).protocol}//${page.custom_domain}` : pageAddress(publicUrl, page);
}
