-- Secrets of the service itself (not of an account), made on first start and kept: the key of the
-- dashboard session MAC. Never returned by any route.
create table service_secrets (
  name text primary key,
  value bytea not null,
  created_at timestamptz not null default now()
);
