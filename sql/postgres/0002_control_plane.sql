-- Control-plane resources. Fields the service filters, joins or enforces on are columns; the rest of a
-- resource's validated body is kept as jsonb and returned as stored.

alter table accounts add column browser_check_limit integer check (browser_check_limit >= 0);

create table check_groups (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  name text not null,
  data jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index check_groups_account on check_groups (account_id, id);

create table checks (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  check_type text not null,
  name text not null,
  activated boolean not null,
  muted boolean not null,
  frequency integer not null,
  tags text[] not null default '{}',
  group_id bigint references check_groups (id) on delete restrict,
  data jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index checks_account on checks (account_id, created_at, id);
create index checks_group on checks (group_id) where group_id is not null;
create index checks_tags on checks using gin (tags);

create table alert_channels (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  type text not null,
  config jsonb not null,
  send_recovery boolean not null default true,
  send_failure boolean not null default true,
  send_degraded boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index alert_channels_account on alert_channels (account_id, id);

create table alert_subscriptions (
  id bigint generated always as identity primary key,
  alert_channel_id bigint not null references alert_channels (id) on delete cascade,
  check_id uuid references checks (id) on delete cascade,
  group_id bigint references check_groups (id) on delete cascade,
  activated boolean not null default true,
  check (num_nonnulls(check_id, group_id) = 1)
);
create unique index alert_subscriptions_check on alert_subscriptions (alert_channel_id, check_id) where check_id is not null;
create unique index alert_subscriptions_group on alert_subscriptions (alert_channel_id, group_id) where group_id is not null;
create index alert_subscriptions_by_check on alert_subscriptions (check_id) where check_id is not null;

create table dashboards (
  id bigint generated always as identity primary key,
  dashboard_id text not null unique,
  account_id uuid not null references accounts (id) on delete cascade,
  custom_url text,
  custom_domain text,
  data jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
-- Unique across all accounts, whatever the case.
create unique index dashboards_custom_url on dashboards (lower(custom_url)) where custom_url is not null;
create unique index dashboards_custom_domain on dashboards (lower(custom_domain)) where custom_domain is not null;
create index dashboards_account on dashboards (account_id, id);

create table dashboard_keys (
  id uuid primary key default gen_random_uuid(),
  dashboard_id bigint not null references dashboards (id) on delete cascade,
  key_hash bytea not null unique,
  key_suffix text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index dashboard_keys_dashboard on dashboard_keys (dashboard_id);

create table maintenance_windows (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  data jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index maintenance_windows_account on maintenance_windows (account_id, id);

create table variables (
  account_id uuid not null references accounts (id) on delete cascade,
  key text not null,
  value text not null,
  locked boolean not null default false,
  secret boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz,
  primary key (account_id, key)
);

create table test_sessions (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  name text not null,
  status text not null check (status in ('RUNNING', 'PASSED', 'FAILED', 'CANCELLED')),
  metadata jsonb,
  started_at timestamptz not null default now(),
  stopped_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index test_sessions_account on test_sessions (account_id, started_at desc, id);

create table test_session_results (
  id uuid primary key default gen_random_uuid(),
  test_session_id uuid not null references test_sessions (id) on delete cascade,
  position integer not null,
  data jsonb not null,
  created_at timestamptz not null default now()
);
create index test_session_results_session on test_session_results (test_session_id, position);
