import { HttpError } from '../../http/errors.js';
import type { Sql } from '../../storage/postgres.js';
import type { GroupData } from '../check-groups/routes.js';
import { iso } from '../common.js';
import { Rules } from '../rules.js';
import { frequencyOffsetProblem, type CheckType } from './catalog.js';
import { applyGroupSettings } from './group-settings.js';
import { maskSecrets, type EnvVar } from './secrets.js';

export type CheckData = Record<string, unknown> & {
  name: string;
  activated: boolean;
  muted: boolean;
  frequency: number;
  frequencyOffset?: number;
  tags?: string[];
  groupId?: number | null;
  alertChannelSubscriptions?: { alertChannelId: number; activated: boolean }[];
  environmentVariables?: EnvVar[] | null;
};

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface ChannelRow {
  check_id: string;
  alert_channel_id: number;
  activated: boolean;
  type: string;
  config: Record<string, unknown>;
}

/** Rules JSON Schema cannot state, plus references that must name rows of the same account. */
export async function checkRules(db: Sql, accountId: string, data: CheckData): Promise<void> {
  const rules = new Rules();
  const offsetProblem = frequencyOffsetProblem(data.frequency, data.frequencyOffset);
  if (offsetProblem) rules.fail('body.frequencyOffset', 'frequencyOffset', offsetProblem);
  if (data.groupId != null) {
    const [group] = await db`select id from check_groups where id = ${data.groupId} and account_id = ${accountId}`;
    rules.check(!!group, 'body.groupId', 'exists', 'names no check group of this account');
  }
  const wanted = (data.alertChannelSubscriptions ?? []).map((s) => s.alertChannelId);
  if (wanted.length) {
    const found = new Set(
      (await db`select id from alert_channels where account_id = ${accountId} and id = any(${wanted}::bigint[])`).map(
        (r) => r.id as number,
      ),
    );
    wanted.forEach((id, i) => {
      if (!found.has(id)) rules.fail(`body.alertChannelSubscriptions[${i}].alertChannelId`, 'exists', 'names no alert channel of this account');
    });
  }
  rules.throwIfAny();
}

/** Per-account cap on browser checks (unlimited when null); the account row lock serialises creators. */
export async function enforceBrowserLimit(db: Sql, accountId: string): Promise<void> {
  const [account] = await db`select browser_check_limit from accounts where id = ${accountId} for update`;
  const limit = account?.browser_check_limit as number | null;
  if (limit === null || limit === undefined) return;
  const [{ n }] = await db`select count(*)::int as n from checks where account_id = ${accountId} and check_type = 'BROWSER'`;
  if (n >= limit) throw new HttpError(402, 'Payment Required', { limit, browserChecks: n });
}

function storedData(data: CheckData): Record<string, unknown> {
  const { alertChannelSubscriptions: _subs, ...rest } = data;
  return rest;
}

export async function insertCheck(db: Sql, accountId: string, checkType: CheckType, data: CheckData): Promise<string> {
  const [row] = await db`insert into checks (account_id, check_type, name, activated, muted, frequency, tags, group_id, data)
    values (${accountId}, ${checkType}, ${data.name}, ${data.activated}, ${data.muted}, ${data.frequency},
      ${data.tags ?? []}, ${data.groupId ?? null}, ${db.json(storedData(data) as never)}) returning id`;
  return row.id as string;
}

export async function updateCheck(db: Sql, id: string, data: CheckData): Promise<void> {
  await db`update checks set name = ${data.name}, activated = ${data.activated}, muted = ${data.muted},
      frequency = ${data.frequency}, tags = ${data.tags ?? []}, group_id = ${data.groupId ?? null},
      data = ${db.json(storedData(data) as never)}, updated_at = now()
    where id = ${id}`;
}

/**
 * Subscriptions: an explicit list replaces the check's own; `autoAssign` subscribes the check to every
 * channel of the account it has no subscription row for yet (explicitly paused ones stay paused).
 */
export async function saveSubscriptions(
  db: Sql,
  accountId: string,
  checkId: string,
  explicit: CheckData['alertChannelSubscriptions'],
  autoAssign: boolean,
): Promise<void> {
  if (explicit) {
    await db`delete from alert_subscriptions where check_id = ${checkId}`;
    for (const s of explicit) {
      await db`insert into alert_subscriptions (alert_channel_id, check_id, activated)
        values (${s.alertChannelId}, ${checkId}, ${s.activated})
        on conflict (alert_channel_id, check_id) where check_id is not null do update set activated = excluded.activated`;
    }
  }
  if (autoAssign) {
    await db`insert into alert_subscriptions (alert_channel_id, check_id, activated)
      select c.id, ${checkId}, true from alert_channels c
      where c.account_id = ${accountId}
        and not exists (select 1 from alert_subscriptions s where s.alert_channel_id = c.id and s.check_id = ${checkId})`;
  }
}

function groupChannels(rows: ChannelRow[]) {
  const out = {
    email: [] as { address: string }[],
    webhook: [] as Record<string, unknown>[],
    slack: [] as { url: string }[],
    sms: [] as { number: string; name: string }[],
  };
  for (const r of rows) {
    if (!r.activated) continue;
    const c = r.config;
    if (r.type === 'EMAIL') out.email.push({ address: c.address as string });
    else if (r.type === 'SLACK') out.slack.push({ url: c.url as string });
    else if (r.type === 'SMS') out.sms.push({ number: c.number as string, name: c.name as string });
    else if (r.type === 'WEBHOOK') {
      out.webhook.push({ url: c.url, name: c.name, method: c.method, headers: c.headers, queryParameters: c.queryParameters });
    }
  }
  return out;
}

export interface ReadOptions {
  includeDependencies?: boolean;
  applyGroupSettings?: boolean;
}

/** Loads checks of one account with their subscriptions (and groups when asked), in three queries at most. */
export async function readChecks(db: Sql, accountId: string, rows: Record<string, unknown>[], opts: ReadOptions = {}) {
  const ids = rows.map((r) => r.id as string);
  const channelRows = ids.length
    ? ((await db`select s.check_id, s.alert_channel_id, s.activated, c.type, c.config
        from alert_subscriptions s join alert_channels c on c.id = s.alert_channel_id
        where s.check_id = any(${ids}::uuid[]) and c.account_id = ${accountId}
        order by s.alert_channel_id`) as unknown as ChannelRow[])
    : [];
  const groupIds = opts.applyGroupSettings ? [...new Set(rows.map((r) => r.group_id).filter((g) => g != null))] : [];
  const groups = new Map<number, GroupData>();
  if (groupIds.length) {
    for (const g of await db`select id, data from check_groups where id = any(${groupIds as number[]}::bigint[]) and account_id = ${accountId}`) {
      groups.set(g.id as number, g.data as GroupData);
    }
  }
  return rows.map((row) => {
    const own = channelRows.filter((c) => c.check_id === row.id);
    let data: Record<string, unknown> = { ...(row.data as Record<string, unknown>), checkType: row.check_type };
    const group = row.group_id != null ? groups.get(row.group_id as number) : undefined;
    if (group) data = applyGroupSettings(data, group);
    const { dependencies, environmentVariables, ...rest } = data;
    return {
      id: row.id as string,
      ...rest,
      checkType: row.check_type as CheckType,
      tags: (rest.tags as string[] | undefined) ?? [],
      ...(environmentVariables ? { environmentVariables: maskSecrets(environmentVariables as EnvVar[]) } : {}),
      ...(opts.includeDependencies ? { dependencies: (dependencies as unknown[] | null | undefined) ?? [] } : {}),
      alertChannelSubscriptions: own.map((c) => ({ alertChannelId: c.alert_channel_id, activated: c.activated })),
      alertChannels: groupChannels(own),
      created_at: iso(row.created_at as Date),
      updated_at: iso(row.updated_at as Date | null),
    };
  });
}

export async function findCheckRow(db: Sql, accountId: string, id: string, lock = false) {
  if (!UUID.test(id)) return undefined;
  const [row] = lock
    ? await db`select * from checks where id = ${id} and account_id = ${accountId} for update`
    : await db`select * from checks where id = ${id} and account_id = ${accountId}`;
  return row;
}
