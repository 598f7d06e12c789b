-- The current state of each check, kept by the ingest worker from the results it lands (not computed per
-- request). A run is applied when it is newer than the last applied one, ordered by (started_at, result id),
-- so a batch applied twice changes nothing and an older run that arrives late does not roll the state back.
create table check_statuses (
  check_id uuid primary key references checks (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  has_failures boolean not null,
  has_errors boolean not null,
  is_degraded boolean not null,
  last_run_location text not null,
  last_check_run_id uuid not null,
  last_run_at timestamptz not null,
  -- The latest run in each location: {location: {duration, failed}}; longest and shortest run come from it.
  latest_by_location jsonb not null default '{}',
  ssl_days_remaining double precision,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index check_statuses_account on check_statuses (account_id);

-- Heartbeat checks are pinged at /ping/{token}: an unguessable token per check, not its id.
alter table checks add column ping_token uuid unique;
