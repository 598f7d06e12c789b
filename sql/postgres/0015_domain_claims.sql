-- A custom domain serves an account's status page or dashboard only once the account proved it controls the name:
-- a TXT record `_monitoring-challenge.<domain>` holding the claim's token (POST /v1/custom-domains/{domain}/verify).
-- Claims are per account, so a name one tenant typed first never blocks its owner; a verified claim is its
-- account's alone (one verified claim per domain). A domain is used by at most one page or dashboard of an account.
create table domain_claims (
  account_id uuid not null references accounts (id) on delete cascade,
  domain text not null,
  token text not null,
  verified_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (account_id, domain)
);
create unique index domain_claims_verified on domain_claims (domain) where verified_at is not null;

-- Domains were unique across accounts (first come, first served) and served without proof: each stays served, as
-- a verified claim of the account that holds it.
insert into domain_claims (account_id, domain, token, verified_at)
  select distinct on (domain) account_id, domain, md5(random()::text || clock_timestamp()::text), now()
  from (
    select account_id, lower(custom_domain) as domain, created_at from status_pages where custom_domain is not null
    union all
    select account_id, lower(custom_domain), created_at from dashboards where custom_domain is not null
  ) used
  order by domain, created_at;

drop index dashboards_custom_domain;
create unique index dashboards_custom_domain on dashboards (account_id, lower(custom_domain)) where custom_domain is not null;
drop index status_pages_custom_domain;
create unique index status_pages_custom_domain on status_pages (account_id, lower(custom_domain)) where custom_domain is not null;
