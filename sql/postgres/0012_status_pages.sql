-- Status pages (docs/status-pages.md): services, pages with cards of services, incidents on services with their
-- updates, email subscribers; the anchor's dashboard incidents (/v1/incidents) and the maintenances (occurrences)
-- of maintenance windows shown on status pages.

create table status_page_services (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  name text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index status_page_services_account on status_page_services (account_id, created_at, id);

create table status_pages (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  -- The public slug (/status/{url}) and the custom domain: unique across accounts, lower case.
  url text not null,
  custom_domain text,
  data jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create unique index status_pages_url on status_pages (url);
create unique index status_pages_custom_domain on status_pages (custom_domain) where custom_domain is not null;
create index status_pages_account on status_pages (account_id, created_at, id);

-- A page's cards in order, each a list of services (in order).
create table status_page_cards (
  id uuid primary key default gen_random_uuid(),
  status_page_id uuid not null references status_pages (id) on delete cascade,
  position integer not null,
  name text not null,
  service_ids uuid[] not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index status_page_cards_page on status_page_cards (status_page_id, position);

create table status_page_incidents (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  name text not null,
  severity text not null check (severity in ('CRITICAL', 'MAJOR', 'MEDIUM', 'MINOR')),
  last_update_status text not null check (last_update_status in ('INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED')),
  -- Opened by a check's triggerIncident (the alert incident it mirrors); null when declared by hand.
  check_incident_id uuid references incidents (id) on delete set null,
  resolved_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index status_page_incidents_account on status_page_incidents (account_id, created_at desc, id);
create unique index status_page_incidents_check on status_page_incidents (check_incident_id) where check_incident_id is not null;

create table status_page_incident_services (
  incident_id uuid not null references status_page_incidents (id) on delete cascade,
  service_id uuid not null references status_page_services (id) on delete cascade,
  primary key (incident_id, service_id)
);
create index status_page_incident_services_service on status_page_incident_services (service_id);

create table status_page_incident_updates (
  id uuid primary key default gen_random_uuid(),
  incident_id uuid not null references status_page_incidents (id) on delete cascade,
  status text not null check (status in ('INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED')),
  description text not null,
  public_at timestamptz not null default now(),
  notify_subscribers boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index status_page_incident_updates_incident on status_page_incident_updates (incident_id, public_at, created_at);

create table status_page_subscriptions (
  id uuid primary key default gen_random_uuid(),
  status_page_id uuid not null references status_pages (id) on delete cascade,
  type text not null check (type in ('EMAIL')),
  address text not null,
  -- PENDING until the subscriber opens the confirm link of their first mail (double opt-in). The links carry a MAC
  -- of the subscription's id keyed by a service secret, so no token is stored.
  status text not null check (status in ('PENDING', 'VERIFIED')),
  created_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz
);
create unique index status_page_subscriptions_address on status_page_subscriptions (status_page_id, lower(address));

-- Mail to subscribers, written in the transaction that made it due and sent by a queue worker (never lost).
create table status_page_mails (
  id uuid primary key default gen_random_uuid(),
  subscription_id uuid not null references status_page_subscriptions (id) on delete cascade,
  kind text not null check (kind in ('confirm', 'incident', 'maintenance')),
  subject text not null,
  body text not null,
  created_at timestamptz not null default now(),
  queued_at timestamptz,
  sent_at timestamptz,
  attempts integer not null default 0,
  last_error text
);
create index status_page_mails_unsent on status_page_mails (created_at) where sent_at is null;

-- The anchor's dashboard incidents (/v1/incidents): shown on a dashboard.
create table dashboard_incidents (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  dashboard_id bigint not null references dashboards (id) on delete cascade,
  name text not null,
  impact text not null check (impact in ('MAINTENANCE', 'MAJOR', 'MINOR')),
  started_at timestamptz,
  stopped_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index dashboard_incidents_dashboard on dashboard_incidents (dashboard_id, created_at desc);

create table dashboard_incident_updates (
  id uuid primary key default gen_random_uuid(),
  incident_id uuid not null references dashboard_incidents (id) on delete cascade,
  status text not null check (status in ('INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'MAINTENANCE')),
  description text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz
);
create index dashboard_incident_updates_incident on dashboard_incident_updates (incident_id, created_at);

-- One occurrence of a maintenance window shown on status pages, materialised when first listed or shown.
create table maintenances (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  window_id bigint not null references maintenance_windows (id) on delete cascade,
  -- The occurrence's scheduled start (its identity), and its dates as adjusted.
  occurrence_at timestamptz not null,
  starts_at timestamptz not null,
  ends_at timestamptz not null,
  -- Set by an update; null: derived from the dates (SCHEDULED, IN_PROGRESS, COMPLETED).
  status text check (status in ('SCHEDULED', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED', 'CANCELLED')),
  -- Deleted through the API: kept so the occurrence is not made again.
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (window_id, occurrence_at)
);

create table maintenance_updates (
  id uuid primary key default gen_random_uuid(),
  maintenance_id uuid not null references maintenances (id) on delete cascade,
  status text not null check (status in ('SCHEDULED', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED', 'CANCELLED')),
  description text not null,
  notify_subscribers boolean not null default false,
  previous_status text,
  previous_starts_at timestamptz,
  previous_ends_at timestamptz,
  date_adjustments jsonb,
  created_at timestamptz not null default now()
);
create index maintenance_updates_maintenance on maintenance_updates (maintenance_id, created_at);
