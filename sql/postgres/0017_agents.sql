-- Agents: runner processes of a private location that reach the service only over HTTPS with a location key
-- (docs/agent.md). Each registers with its own id (kept in its data folder), its version and what it can run;
-- every call it makes stamps last_seen_at. The address is where its calls come from: its egress as the service
-- sees it, what /v1/static-ips answers for its location.
create table agents (
  id uuid primary key,
  private_location_id uuid not null references private_locations (id) on delete cascade,
  version text not null,
  capabilities text[] not null default '{}',
  concurrency integer not null,
  address text,
  egress_ips text[] not null default '{}',
  started_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
create index agents_location_seen on agents (private_location_id, last_seen_at desc);

-- When a location with checks was last served by an agent, and whether its "no agent" alert is open.
alter table private_locations add column last_agent_at timestamptz;
alter table private_locations add column unavailable_since timestamptz;
