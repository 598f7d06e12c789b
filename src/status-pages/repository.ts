import { iso } from '../model/time.js';
import type { Sql } from '../storage/postgres.js';
import { type ServiceRow, type ServiceView, toService } from './incident-repository.js';
import type { Palette, StatusPageBody, WindowBody } from './schemas.js';

/** Status pages, their cards and subscribers (docs/status-pages.md); incidents are in incidents/repository.ts. */

export interface PageRow {
  id: string;
  account_id: string;
  url: string;
  custom_domain: string | null;
  data: PageData;
  created_at: Date;
  updated_at: Date | null;
}

/** What a page keeps besides its cards, url and domain. */
export interface PageData {
  name: string;
  description: string | null;
  themeColors: { light: Palette; dark: Palette } | null;
  logo: string | null;
  logoDark: string | null;
  redirectTo: string | null;
  favicon: string | null;
  defaultTheme: 'LIGHT' | 'DARK' | 'AUTO';
  version: number | null;
}

interface CardRow {
  id: string;
  status_page_id: string;
  position: number;
  name: string;
  service_ids: string[];
  created_at: Date;
  updated_at: Date | null;
}

export interface PageView extends PageData {
  id: string;
  accountId: string;
  url: string;
  customDomain: string | null;
  cards: { id: string; name: string; services: ServiceView[]; created_at: string; updated_at: string | null }[];
  whiteLabel: boolean;
  isPrivate: boolean;
  created_at: string;
  updated_at: string | null;
}

const upper = (p: Palette): Palette => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, String(v).toUpperCase()])) as Palette;

export function pageData(body: StatusPageBody): PageData {
  return {
    name: body.name,
    description: body.description ?? null,
    themeColors: body.themeColors ? { light: upper(body.themeColors.light), dark: upper(body.themeColors.dark) } : null,
    logo: body.logo ?? null,
    logoDark: body.logoDark ?? null,
    redirectTo: body.redirectTo ?? null,
    favicon: body.favicon ?? null,
    defaultTheme: body.defaultTheme ?? 'AUTO',
    version: body.version ?? null,
  };
}

/** The service ids `body` names that the account does not have. */
export async function unknownServices(sql: Sql, accountId: string, ids: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(ids.map((i) => i.toLowerCase()))];
  if (!wanted.length) return [];
  const found = await sql<{ id: string }[]>`select id from status_page_services where account_id = ${accountId} and id = any(${wanted}::uuid[])`;
  const have = new Set(found.map((r) => r.id));
  return wanted.filter((id) => !have.has(id));
}

/** The ids of `ids` that name no status page of the account (another account's ids among them). */
export async function unknownPages(sql: Sql, accountId: string, ids: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(ids.map((i) => i.toLowerCase()))];
  if (!wanted.length) return [];
  const found = await sql<{ id: string }[]>`select id from status_pages where account_id = ${accountId} and id = any(${wanted}::uuid[])`;
  const have = new Set(found.map((r) => r.id));
  return wanted.filter((id) => !have.has(id));
}

async function writeCards(tx: Sql, pageId: string, cards: StatusPageBody['cards']): Promise<void> {
  await tx`delete from status_page_cards where status_page_id = ${pageId}`;
  if (!cards.length) return;
  await tx`insert into status_page_cards ${tx(
    cards.map((c, position) => ({
      status_page_id: pageId,
      position,
      name: c.name,
      service_ids: [...new Set((c.services ?? []).map((s) => s.id.toLowerCase()))],
    })),
    'status_page_id',
    'position',
    'name',
    'service_ids',
  )}`;
}

export async function createPage(tx: Sql, accountId: string, body: StatusPageBody): Promise<string> {
  const [row] = await tx<{ id: string }[]>`insert into status_pages (account_id, url, custom_domain, data)
    values (${accountId}, ${body.url.toLowerCase()}, ${body.customDomain?.toLowerCase() ?? null}, ${tx.json(pageData(body) as never)}) returning id`;
  await writeCards(tx, row!.id, body.cards);
  return row!.id;
}

export async function replacePage(tx: Sql, accountId: string, id: string, body: StatusPageBody): Promise<boolean> {
  const rows = await tx`update status_pages set url = ${body.url.toLowerCase()}, custom_domain = ${body.customDomain?.toLowerCase() ?? null},
    data = ${tx.json(pageData(body) as never)}, updated_at = now() where id = ${id} and account_id = ${accountId} returning id`;
  if (!rows.length) return false;
  await writeCards(tx, id, body.cards);
  return true;
}

/** Pages with their cards and the cards' services, in the order of `rows`. */
export async function pageViews(sql: Sql, rows: readonly PageRow[]): Promise<PageView[]> {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const cards = await sql<CardRow[]>`select * from status_page_cards where status_page_id = any(${ids}::uuid[]) order by position`;
  const serviceIds = [...new Set(cards.flatMap((c) => c.service_ids))];
  const services = serviceIds.length ? await sql<ServiceRow[]>`select * from status_page_services where id = any(${serviceIds}::uuid[])` : [];
  const byId = new Map(services.map((s) => [s.id, toService(s)]));
  return rows.map((r) => ({
    id: r.id,
    accountId: r.account_id,
    ...r.data,
    url: r.url,
    customDomain: r.custom_domain,
    cards: cards
      .filter((c) => c.status_page_id === r.id)
      .map((c) => ({
        id: c.id,
        name: c.name,
        services: c.service_ids.flatMap((s) => byId.get(s) ?? []),
        created_at: iso(c.created_at)!,
        updated_at: iso(c.updated_at),
      })),
    whiteLabel: false,
    isPrivate: false,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at),
  }));
}

export async function findPage(sql: Sql, accountId: string, id: string): Promise<PageRow | undefined> {
  const [row] = await sql<PageRow[]>`select * from status_pages where id = ${id} and account_id = ${accountId}`;
  return row;
}

/**
 * The page published at /status/{url}, or on a custom domain its account verified (any account's: public pages).
 * A domain several accounts name is served only by the one whose claim is verified.
 */
export async function publishedPage(sql: Sql, by: { url: string } | { domain: string }): Promise<PageRow | undefined> {
  const [row] =
    'url' in by
      ? await sql<PageRow[]>`select * from status_pages where url = ${by.url.toLowerCase()}`
      : await sql<PageRow[]>`select p.* from status_pages p join domain_claims c on c.account_id = p.account_id and c.domain = lower(p.custom_domain)
        where lower(p.custom_domain) = ${by.domain.toLowerCase()} and c.verified_at is not null`;
  return row;
}

/** A cursor page of rows of the account's `table` (newest last: created_at, id), starting at `nextId`. */
export async function cursorPage<Row extends { id: string }>(
  sql: Sql,
  table: 'status_pages' | 'status_page_services',
  accountId: string,
  limit: number,
  nextId?: string,
): Promise<{ rows: Row[]; nextId: string | null }> {
  const from = nextId
    ? (await sql<{ created_at: Date; id: string }[]>`select created_at, id from ${sql(table)} where account_id = ${accountId} and id = ${nextId}`)[0]
    : undefined;
  const rows = await sql<Row[]>`select * from ${sql(table)} where account_id = ${accountId}
    ${from ? sql`and (created_at, id) >= (${from.created_at}, ${from.id})` : sql``}
    order by created_at, id limit ${limit + 1}`;
  return { rows: rows.slice(0, limit), nextId: rows[limit]?.id ?? null };
}

export async function deleteService(tx: Sql, accountId: string, id: string): Promise<boolean> {
  const rows = await tx`delete from status_page_services where id = ${id} and account_id = ${accountId} returning id`;
  if (!rows.length) return false;
  // Cards of the account's pages stop naming it.
  await tx`update status_page_cards c set service_ids = array_remove(service_ids, ${id}::uuid), updated_at = now()
    from status_pages p where p.id = c.status_page_id and p.account_id = ${accountId} and ${id}::uuid = any(c.service_ids)`;
  return true;
}

export interface SubscriptionRow {
  id: string;
  status_page_id: string;
  type: 'EMAIL';
  address: string;
  status: 'PENDING' | 'VERIFIED';
  created_at: Date;
  updated_at: Date | null;
}

export const toSubscription = (r: SubscriptionRow) => ({
  id: r.id,
  type: r.type,
  address: r.address,
  status: r.status,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at ?? r.created_at)!,
});

export async function subscriptionsOf(sql: Sql, pageId: string): Promise<SubscriptionRow[]> {
  return sql<SubscriptionRow[]>`select * from status_page_subscriptions where status_page_id = ${pageId} order by created_at, id`;
}

/**
 * The account's verified subscribers over all its pages, counted under a lock of the account's own (held to the end
 * of the transaction), so two imports at once cannot both pass the autoVerify cap.
 */
export async function verifiedSubscribersLocked(tx: Sql, accountId: string): Promise<number> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`status-page-autoverify:${accountId}`}, 0))`;
  const [row] = await tx<{ n: number }[]>`select count(*)::int as n from status_page_subscriptions s join status_pages p on p.id = s.status_page_id
    where p.account_id = ${accountId} and s.status = 'VERIFIED'`;
  return row?.n ?? 0;
}

/**
 * Subscribes addresses to a page: verified at once (an imported list), or pending with a confirm mail each
 * (double opt-in). An address already subscribed is skipped. Answers how many were added.
 */
export async function subscribe(
  tx: Sql,
  pageId: string,
  addresses: readonly string[],
  verified: boolean,
): Promise<{ created: number; skipped: number; ids: string[] }> {
  const firsts = new Map<string, string>();
  for (const a of addresses) if (!firsts.has(a.trim().toLowerCase())) firsts.set(a.trim().toLowerCase(), a.trim());
  const unique = [...firsts.values()];
  const ids: string[] = [];
  for (const address of unique) {
    const [row] = await tx<{ id: string }[]>`insert into status_page_subscriptions (status_page_id, type, address, status)
      values (${pageId}, 'EMAIL', ${address}, ${verified ? 'VERIFIED' : 'PENDING'})
      on conflict (status_page_id, lower(address)) do nothing returning id`;
    if (!row) continue;
    ids.push(row.id);
    if (!verified) {
      await tx`insert into status_page_mails (subscription_id, kind, subject, body)
        select ${row.id}, 'confirm', 'Confirm your subscription to ' || (data->>'name'),
          'Someone (we hope you) asked to hear about incidents and maintenance on the ' || (data->>'name') || ' status page.' || E'\n\n' ||
          'Open the link below to confirm. If it was not you, ignore this mail: nothing more will be sent.'
        from status_pages where id = ${pageId}`;
    }
  }
  return { created: ids.length, skipped: addresses.length - ids.length, ids };
}

export interface WindowRow {
  id: number;
  data: WindowBody;
  created_at: Date;
  updated_at: Date | null;
}

export async function insertWindow(db: Sql, accountId: string, body: WindowBody): Promise<WindowRow> {
  const [row] = await db<WindowRow[]>`insert into maintenance_windows (account_id, data) values (${accountId}, ${db.json(body as never)}) returning *`;
  return row!;
}

/** Replaces a window's definition; a zone left out keeps the stored one (the anchor's rule), null resets it to UTC. */
export async function replaceWindow(db: Sql, accountId: string, id: number, body: WindowBody): Promise<WindowRow | undefined> {
  const [row] = await db<WindowRow[]>`update maintenance_windows
    set data = ${db.json(body as never)} || case when ${body.timezone === undefined} then jsonb_build_object('timezone', data->'timezone') else '{}'::jsonb end,
      updated_at = now()
    where id = ${id} and account_id = ${accountId} returning *`;
  return row;
}

/** A check's state as a badge shows it. */
export interface BadgeRow {
  id: string;
  account_id: string;
  name: string;
  has_failures: boolean | null;
  has_errors: boolean | null;
  is_degraded: boolean | null;
  latest_by_location: Record<string, { duration?: number | null }> | null;
}

/** The check's badge rows (one, or none: no such check, or its account serves no badges). */
export async function badgeOfCheck(db: Sql, checkId: string): Promise<BadgeRow[]> {
  return db<BadgeRow[]>`select c.id, c.account_id, c.name, s.has_failures, s.has_errors, s.is_degraded, s.latest_by_location
    from checks c join accounts a on a.id = c.account_id and a.badges_enabled
    left join check_statuses s on s.check_id = c.id where c.id = ${checkId}`;
}

/** A group's name and its activated checks' badge rows; undefined when its account serves no badges or it is none. */
export async function badgeOfGroup(db: Sql, groupId: number): Promise<{ name: string; rows: BadgeRow[] } | undefined> {
  const [group] = await db<{ name: string }[]>`select g.name from check_groups g join accounts a on a.id = g.account_id and a.badges_enabled
    where g.id = ${groupId}`;
  if (!group) return undefined;
  const rows = await db<BadgeRow[]>`select c.id, c.account_id, c.name, s.has_failures, s.has_errors, s.is_degraded, s.latest_by_location
    from checks c left join check_statuses s on s.check_id = c.id where c.group_id = ${groupId} and c.activated`;
  return { name: group.name, rows };
}

/** Deletes a page and its subscribers; false when the account has no such page. */
export async function deletePage(db: Sql, accountId: string, id: string): Promise<boolean> {
  const rows = await db`delete from status_pages where id = ${id} and account_id = ${accountId} returning id`;
  return rows.length > 0;
}

/** Removes a subscriber of one of the account's pages; false when there is none. */
export async function deleteSubscription(db: Sql, accountId: string, pageId: string, id: string): Promise<boolean> {
  const rows = await db`delete from status_page_subscriptions s using status_pages p
    where s.id = ${id} and s.status_page_id = ${pageId} and p.id = s.status_page_id and p.account_id = ${accountId} returning s.id`;
  return rows.length > 0;
}

/** A subscription of the page (a mail's link names it); undefined when the page has none by that id. */
export async function pageSubscription(db: Sql, pageId: string, id: string): Promise<{ id: string; status: string } | undefined> {
  const [row] = await db<{ id: string; status: string }[]>`select id, status from status_page_subscriptions where id = ${id} and status_page_id = ${pageId}`;
  return row;
}

/** The subscriber confirmed through their mail's link: verified, and from now on every incident's mail. */
export async function confirmSubscription(db: Sql, id: string): Promise<void> {
  await db`update status_page_subscriptions set status = 'VERIFIED', confirmed_at = coalesce(confirmed_at, now()), updated_at = now() where id = ${id}`;
}

/** The subscriber left through their mail's link. */
export async function endSubscription(db: Sql, id: string): Promise<void> {
  await db`delete from status_page_subscriptions where id = ${id}`;
}
