-- Acting on results: each check's alert state (kept beside its status by the ingest worker), the alerts it
-- raised, their deliveries per channel, incidents opened by triggerIncident, and heartbeat deadlines.

alter table check_statuses
  add column alert_state text not null default 'PASSING' check (alert_state in ('PASSING', 'DEGRADED', 'FAILING')),
  add column failure_streak integer not null default 0,
  add column degraded_streak integer not null default 0,
  add column failing_since timestamptz,
  add column reminders_sent integer not null default 0,
  add column next_reminder_at timestamptz;
create index check_statuses_reminders on check_statuses (next_reminder_at) where next_reminder_at is not null;

create table incidents (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  check_id uuid not null references checks (id) on delete cascade,
  service_id text not null,
  name text not null,
  description text,
  severity text,
  notify_subscribers boolean not null default false,
  opened_at timestamptz not null default now(),
  resolved_at timestamptz
);
-- At most one open incident per check.
create unique index incidents_open on incidents (check_id) where resolved_at is null;
create index incidents_account on incidents (account_id, opened_at desc);

create table check_alerts (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  check_id uuid not null references checks (id) on delete cascade,
  alert_type text not null,
  check_result_id uuid,
  run_location text,
  response_time double precision,
  status_code integer,
  started_at timestamptz not null,
  -- Recorded, not sent: a maintenance window silenced it, or the check is muted.
  silenced boolean not null default false,
  muted boolean not null default false,
  incident_id uuid references incidents (id) on delete set null,
  created_at timestamptz not null default now()
);
create index check_alerts_account on check_alerts (account_id, created_at desc);
create index check_alerts_check on check_alerts (check_id, created_at desc);

create table alert_notifications (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  alert_id uuid not null references check_alerts (id) on delete cascade,
  alert_channel_id bigint not null references alert_channels (id) on delete cascade,
  channel_type text not null,
  status text not null default 'IN_PROGRESS' check (status in ('IN_PROGRESS', 'SUCCESS', 'FAILURE')),
  -- Every delivery attempt: {at, ok, detail}.
  attempts jsonb not null default '[]',
  notification_result text,
  created_at timestamptz not null default now(),
  sent_at timestamptz
);
create index alert_notifications_account on alert_notifications (account_id, created_at desc);
create index alert_notifications_channel on alert_notifications (alert_channel_id, created_at desc);
create index alert_notifications_open on alert_notifications (created_at) where status = 'IN_PROGRESS';

-- Webhook channels sign their payloads with this secret (HMAC-SHA256); shown once, at creation.
alter table alert_channels add column signing_secret text;

create table heartbeat_deadlines (
  check_id uuid primary key references checks (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  -- When a missed ping is recorded if none arrives before.
  next_deadline_at timestamptz not null,
  last_ping_at timestamptz
);
create index heartbeat_deadlines_due on heartbeat_deadlines (next_deadline_at);
