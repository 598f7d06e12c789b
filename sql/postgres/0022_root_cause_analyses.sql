-- Root-cause analyses (docs/rca.md): one per request to explain an error group (a check's, or a test session's),
-- made by a queue job from the evidence the service holds. PENDING until the job completes it with its analysis.
create table root_cause_analyses (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  -- Exactly one of the two: a check's error group, or a test session's.
  error_group_id uuid,
  test_session_error_group_id uuid,
  check_id uuid,
  check_type text not null,
  status text not null default 'PENDING' check (status in ('PENDING', 'COMPLETED')),
  user_context text not null default '',
  analysis jsonb,
  provider text not null,
  model text not null,
  duration_ms integer not null default 0,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  check ((error_group_id is null) <> (test_session_error_group_id is null))
);
create index root_cause_analyses_group on root_cause_analyses (account_id, error_group_id, created_at desc);
create index root_cause_analyses_ts_group on root_cause_analyses (account_id, test_session_error_group_id, created_at desc);
