import { createHmac, timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../model/secrets.js';
import type { Sql } from '../storage/postgres.js';
import { dashboardKeyHashes, type PublishedDashboard } from './lookup.js';

/** How long a viewer stays signed in to a private dashboard. */
export const SESSION_SECONDS = 30 * 86_400;
/** Wrong keys allowed per client address and dashboard before it has to wait. */
export const LOGIN_RULE = { points: 10, windowSeconds: 900 };

/** The id of the dashboard key `candidate` is, compared by digest in constant time against every key. */
export async function matchKey(sql: Sql, d: PublishedDashboard, candidate: string): Promise<string | undefined> {
  const given = hashSecret(candidate);
  let match: string | undefined;
  for (const key of await dashboardKeyHashes(sql, d.id)) {
    if (key.hash.length === given.length && timingSafeEqual(key.hash, given)) match = key.id;
  }
  return match;
}

/**
 * The session MAC: keyed by the service's own secret (kept in the database's service_secrets on first start,
 * never in an account's data), over the dashboard, the key (its id and stored digest, so deleting the key ends
 * its sessions) and the expiry. Someone who can read the database's dashboards cannot forge a session
 * without that secret.
 */
const mac = (secret: Buffer, keyHash: Buffer, d: PublishedDashboard, keyId: string, expires: number) =>
  createHmac('sha256', secret)
    .update(`${d.dashboardId}.${keyId}.${keyHash.toString('base64url')}.${expires}`)
    .digest('base64url');

/** The cookie of a signed-in viewer: key id, expiry and the MAC. */
export async function sessionToken(sql: Sql, secret: Buffer, d: PublishedDashboard, keyId: string, now = Date.now()): Promise<string> {
  const key = (await dashboardKeyHashes(sql, d.id)).find((k) => k.id === keyId);
  if (!key) throw new Error('sessionToken: no such key');
  const expires = Math.floor(now / 1000) + SESSION_SECONDS;
  return `${keyId}.${expires}.${mac(secret, key.hash, d, keyId, expires)}`;
}

/** Whether a session cookie is one this dashboard issued, unexpired, for a key it still has. */
export async function validSession(sql: Sql, secret: Buffer, d: PublishedDashboard, token: string | undefined, now = Date.now()): Promise<boolean> {
  const m = token ? /^([0-9a-f-]{36})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token) : null;
  if (!m) return false;
  const [, keyId, expiresText, given] = m;
  const expires = Number(expiresText);
  if (expires * 1000 <= now) return false;
  const key = (await dashboardKeyHashes(sql, d.id)).find((k) => k.id === keyId);
  if (!key) return false;
  const expected = Buffer.from(mac(secret, key.hash, d, keyId, expires));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** The cookie's name: one per dashboard, so signing in to one opens no other. */
export const cookieName = (d: PublishedDashboard) => `dashboard_${d.id}`;
