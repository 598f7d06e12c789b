-- Accounts, API keys and which accounts a key may act for.
create table accounts (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  is_default boolean not null default false,
  -- Per-account rate limit; null uses the service default.
  rate_limit_points integer check (rate_limit_points > 0),
  rate_limit_window_seconds integer check (rate_limit_window_seconds > 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
-- At most one default account.
create unique index accounts_one_default on accounts (is_default) where is_default;

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  -- sha256 of the key; the key itself is never stored.
  key_hash bytea not null unique,
  -- Last characters of the key, so a person can tell keys apart.
  key_suffix text not null,
  default_account_id uuid not null references accounts (id) on delete cascade,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);

create type member_role as enum ('read-only', 'read-write', 'admin');

create table memberships (
  api_key_id uuid not null references api_keys (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  role member_role not null,
  created_at timestamptz not null default now(),
  primary key (api_key_id, account_id)
);
create index memberships_account on memberships (account_id);
