import { createHash, randomBytes } from 'node:crypto';

export const ROLES = ['read-only', 'read-write', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** 32 random bytes (256 bits), URL-safe; the prefix makes leaked keys easy to recognise by scanners. */
export function generateApiKey(): string {
  return `mk_${randomBytes(32).toString('base64url')}`;
}

/** Keys (API and dashboard) carry at least 192 bits of entropy, so one round of SHA-256 is enough; no salt or slow hash needed. */
export function hashSecret(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function keySuffix(key: string): string {
  return key.slice(-4);
}
