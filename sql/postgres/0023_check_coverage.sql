-- When each check was activated (docs/analytics.md, "No data"): a period in which an activated check had no run
-- is no data, never up, and a deactivated one is neither. One row per stretch of activation, kept by a trigger so
-- that every path that creates, activates or deactivates a check (the API, deploys, imports) is counted.
create table check_activity (
  check_id uuid not null references checks (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  from_at timestamptz not null,
  -- Null while the check is activated.
  to_at timestamptz,
  primary key (check_id, from_at)
);
create index check_activity_account on check_activity (account_id, check_id);

create function check_activity_track() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    if new.activated then
      insert into check_activity (check_id, account_id, from_at) values (new.id, new.account_id, new.created_at)
        on conflict (check_id, from_at) do update set to_at = null;
    end if;
  elsif new.activated is distinct from old.activated then
    if new.activated then
      insert into check_activity (check_id, account_id, from_at) values (new.id, new.account_id, now())
        on conflict (check_id, from_at) do update set to_at = null;
    else
      update check_activity set to_at = now() where check_id = new.id and to_at is null;
    end if;
  end if;
  return null;
end $$;

create trigger checks_activity after insert or update of activated on checks
  for each row execute function check_activity_track();

insert into check_activity (check_id, account_id, from_at) select id, account_id, created_at from checks where activated;

-- Checks whose runs stopped (past NO_DATA_AFTER_PERIODS of their periods without a run in a location): the
-- "not running" alert was raised for each row, and the row goes when runs resume (the "running again" alert).
create table check_gaps (
  check_id uuid primary key references checks (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  -- The last run before the gap (or the activation, when the check never ran).
  since timestamptz not null,
  locations text[] not null,
  opened_at timestamptz not null default now()
);
create index check_gaps_account on check_gaps (account_id);
