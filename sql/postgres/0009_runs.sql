-- Runs made by the service's own runners (docs/runners.md).

-- When each runnable check runs next: one row per activated check of a type the runners execute, kept by the
-- scheduler's reconcile from the checks and their groups. Slots are epoch-aligned: next_run_ms = k * period_ms +
-- phase_ms, the phase spreading checks over their period.
create table check_schedules (
  check_id uuid primary key references checks (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  period_ms integer not null check (period_ms > 0),
  phase_ms integer not null check (phase_ms >= 0),
  next_run_ms bigint not null,
  updated_at timestamptz not null default now()
);
create index check_schedules_due on check_schedules (next_run_ms);

-- On-demand runs (POST /v2/check-sessions/trigger, trigger URLs, deployment triggers): one session per check,
-- one final result per run location.
create table check_sessions (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  check_id uuid not null references checks (id) on delete cascade,
  check_type text not null,
  name text not null,
  status text not null,
  run_source text not null,
  run_locations text[] not null,
  results jsonb not null default '[]',
  started_at timestamptz not null default now(),
  stopped_at timestamptz,
  timeout_at timestamptz not null
);
create index check_sessions_account on check_sessions (account_id, started_at desc);
create index check_sessions_open on check_sessions (timeout_at) where stopped_at is null;

create table deployment_triggers (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  check_id uuid references checks (id) on delete cascade,
  group_id bigint references check_groups (id) on delete cascade,
  data jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz,
  check ((check_id is null) <> (group_id is null))
);
create unique index deployment_triggers_check on deployment_triggers (check_id) where check_id is not null;
create unique index deployment_triggers_group on deployment_triggers (group_id) where group_id is not null;
