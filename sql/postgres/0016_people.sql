-- People (docs/people.md): users who sign in, their membership of accounts with one of the anchor's five roles,
-- browser sessions, single-use links (sign-in, password reset), invitations, second factors, OpenID Connect
-- settings per account, the mail an account sends people, and the audit log of every write.
create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  name text not null default '',
  -- argon2id (PHC string); null: the user signs in by link or OpenID Connect only.
  password_hash text,
  password_changed_at timestamptz,
  -- RFC 6238 secret (base32) while set up; the second factor is on once totp_enabled_at is set.
  totp_secret text,
  totp_enabled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create unique index users_email on users (lower(email));

create type account_role as enum ('OWNER', 'ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY');

create table account_members (
  account_id uuid not null references accounts (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role account_role not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (account_id, user_id)
);
create index account_members_user on account_members (user_id);

create table user_recovery_codes (
  user_id uuid not null references users (id) on delete cascade,
  code_hash bytea not null,
  used_at timestamptz,
  primary key (user_id, code_hash)
);

-- A browser session: the cookie holds a random token, only its hash is kept.
create table user_sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  token_hash bytea not null unique,
  csrf_token text not null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  ended_at timestamptz,
  address text,
  user_agent text
);
create index user_sessions_user on user_sessions (user_id);

-- Single-use links: a sign-in link (the CLI's create-user) and a password reset.
create table user_tokens (
  token_hash bytea primary key,
  user_id uuid not null references users (id) on delete cascade,
  purpose text not null check (purpose in ('sign-in', 'password-reset')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);

create table invitations (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  email text not null,
  role account_role not null check (role <> 'OWNER'),
  token_hash bytea not null unique,
  inviter_email text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_user_id uuid references users (id) on delete set null,
  revoked_at timestamptz
);
create index invitations_account on invitations (account_id);

-- User API keys act with their user's role in each account the user is a member of; service keys keep memberships.
alter table api_keys
  add column user_id uuid references users (id) on delete cascade,
  add column created_by_user_id uuid references users (id) on delete set null,
  add column expires_at timestamptz;

alter table accounts add column require_two_factor boolean not null default false;

create table account_oidc (
  account_id uuid primary key references accounts (id) on delete cascade,
  issuer text not null,
  client_id text not null,
  client_secret text not null,
  -- The claim holding groups, and which group gives which role (the first match, in the order of role_map).
  role_claim text not null default 'groups',
  role_map jsonb not null default '[]',
  default_role account_role,
  updated_at timestamptz not null default now()
);

-- Mail to people (invitations, password resets), sent by the background worker through SMTP.
create table account_mails (
  id uuid primary key default gen_random_uuid(),
  to_address text not null,
  subject text not null,
  body text not null,
  kind text not null,
  created_at timestamptz not null default now(),
  queued_at timestamptz,
  sent_at timestamptz,
  attempts integer not null default 0,
  last_error text
);
create index account_mails_due on account_mails (created_at) where sent_at is null;

create table audit_log (
  id bigserial primary key,
  account_id uuid references accounts (id) on delete cascade,
  at timestamptz not null default now(),
  actor_type text not null check (actor_type in ('user', 'key', 'anonymous')),
  actor_id text,
  actor_name text,
  operation text not null,
  method text not null,
  path text not null,
  resource_id text,
  fields text[] not null default '{}',
  status integer not null,
  address text
);
create index audit_log_account_at on audit_log (account_id, id desc);
create index audit_log_at on audit_log (at);
