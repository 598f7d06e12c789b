-- Resources of the anchor API its clients manage: snippets, private locations with their keys, client
-- certificates, and trigger URLs (whose calls are recorded as run requests).

create table snippets (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  name text not null,
  script text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index snippets_account on snippets (account_id, id);

create table private_locations (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  name text not null,
  -- What checks name in privateLocations and runners report as runLocation.
  slug_name text not null,
  icon text not null,
  proxy_url text,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create unique index private_locations_slug on private_locations (account_id, slug_name);

create table private_location_keys (
  id uuid primary key default gen_random_uuid(),
  private_location_id uuid not null references private_locations (id) on delete cascade,
  key_hash bytea not null unique,
  key_suffix text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index private_location_keys_location on private_location_keys (private_location_id);

-- The private key and passphrase are secrets runners need in the clear to present the certificate; they are
-- kept here and never returned by any read.
create table client_certificates (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  host text not null,
  cert text not null,
  ca text,
  private_key text,
  passphrase text,
  created_at timestamptz not null default now()
);
create index client_certificates_account on client_certificates (account_id, created_at);

create table triggers (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  check_id uuid unique references checks (id) on delete cascade,
  group_id bigint unique references check_groups (id) on delete cascade,
  token text not null unique,
  created_at timestamptz not null default now(),
  called_at timestamptz,
  updated_at timestamptz,
  check (num_nonnulls(check_id, group_id) = 1)
);

-- A request to run now, what runners pick up: a check or a group (a trigger URL was called), or the checks
-- a client sent to POST /v1/test-sessions/run (their bundle in payload, results reported to the session).
create table run_requests (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts (id) on delete cascade,
  check_id uuid references checks (id) on delete cascade,
  group_id bigint references check_groups (id) on delete cascade,
  test_session_id uuid references test_sessions (id) on delete cascade,
  source text not null,
  payload jsonb,
  requested_at timestamptz not null default now()
);
create index run_requests_account on run_requests (account_id, requested_at);
