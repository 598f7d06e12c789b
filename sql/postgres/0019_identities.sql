-- Identity bound to its account (docs/people.md, "OpenID Connect"). A person signs in through an account's
-- provider only as the identity (issuer, subject) that provider asserted when it made them, or that they linked
-- themselves while signed in: never by an email the provider claims.
create table user_identities (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  issuer text not null,
  subject text not null,
  user_id uuid not null references users (id) on delete cascade,
  -- The email the provider last gave (shown to the person; never used to find them).
  email text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  unique (account_id, issuer, subject)
);
create index user_identities_user on user_identities (user_id);

-- People who signed in through an account's provider before identities were bound: their first sign-in through
-- that account's provider (with their own email) binds the identity, once.
create table user_identities_unbound (
  account_id uuid not null references accounts (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  primary key (account_id, user_id)
);
insert into user_identities_unbound (account_id, user_id)
  select distinct l.account_id, u.id from audit_log l join users u on u.id::text = l.actor_id
  where l.operation = 'signInWithOidc' and l.actor_type = 'user' and l.status = 200 and l.account_id is not null
  on conflict do nothing;

-- A session made by an account's provider acts for that account only; `second_factor` says how the sign-in proved
-- a second factor ('totp', or 'provider' where the account states its provider's MFA stands in).
alter table user_sessions
  add column account_id uuid references accounts (id) on delete cascade,
  add column second_factor text check (second_factor in ('totp', 'provider'));

-- A key made with such a session acts in that account only.
alter table api_keys add column only_account_id uuid references accounts (id) on delete cascade;

-- The last TOTP time step accepted: a code signs in once (RFC 6238 section 5.2).
alter table users add column totp_last_step bigint;

alter table account_oidc add column trust_provider_mfa boolean not null default false;
