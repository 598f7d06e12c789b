-- Runs of checks the anchor's CLI sends or names (`checkly test`, `pw-test`, `trigger`): not the account's
-- scheduled checks, not stored as their results. Each is followed live over MQTT (docs/live-runs.md) and, when the
-- client records, reported to a test session.

-- One `POST /v1/test-sessions/run` or `/next/test-sessions/trigger`: what the CLI's scheduling long poll follows.
create table adhoc_schedulings (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  test_session_id uuid references test_sessions (id) on delete cascade,
  status text not null check (status in ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')),
  checks_total integer not null,
  error jsonb,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  ended_at timestamptz
);
create index adhoc_schedulings_account on adhoc_schedulings (account_id, created_at);

-- One check of a scheduling, run once in one location (its retries are attempts of it). The id is the
-- sequenceId the CLI matches results by; results go to account/<topic_account>/ad-hoc-check-results/
-- <check_run_suite_id>/<id>/<check_run_id>/<result|run-start|error>.
create table adhoc_runs (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  scheduling_id uuid not null references adhoc_schedulings (id) on delete cascade,
  check_run_suite_id uuid not null,
  check_run_id uuid not null,
  topic_account text not null,
  logical_id text not null,
  check_id uuid references checks (id) on delete set null,
  test_session_id uuid references test_sessions (id) on delete cascade,
  test_result_id uuid not null,
  name text not null,
  check_type text not null,
  -- The check as it runs: its data (group settings applied), its own variables, the retry strategy of this run.
  definition jsonb not null,
  location text not null,
  status text not null default 'QUEUED' check (status in ('QUEUED', 'RUNNING', 'DONE', 'CANCELLED')),
  result jsonb,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index adhoc_runs_scheduling on adhoc_runs (scheduling_id);
create index adhoc_runs_session on adhoc_runs (test_session_id) where test_session_id is not null;
create index adhoc_runs_account on adhoc_runs (account_id, created_at);

-- Where a test session comes from: API (POST /v1/test-sessions, `checkly test --record`), TRIGGER (`checkly
-- trigger`, POST /v1/test-sessions/trigger) or PW_REPORTER (the anchor's Playwright reporter).
alter table test_sessions add column provider text not null default 'API';
-- The reporter's zip of a result (a blob key), and where each file is inside it.
alter table test_session_results add column assets jsonb;
