-- Error groups are computed in ClickHouse (check_error_groups); what a user decides about one is kept here:
-- archived until its next failure (archived_at marks when), or for good. The id is the group's (derived from the
-- check and the error hash).
create table error_group_states (
  id uuid primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  -- The check of a check error group; null for a test-session error group.
  check_id uuid references checks (id) on delete cascade,
  error_hash text not null,
  archived_until_next_event boolean not null default false,
  archived_forever boolean not null default false,
  archived_at timestamptz,
  updated_at timestamptz not null default now()
);
create index error_group_states_check on error_group_states (check_id);
