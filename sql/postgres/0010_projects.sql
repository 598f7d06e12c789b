-- Monitoring as code: projects the anchor CLI deploys (`checkly deploy`, `destroy`, `import`). docs/projects.md.

-- A project is (account, logicalId); what it manages is the map (type, logicalId) → physical id below.
create table projects (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  logical_id text not null,
  name text not null,
  repo_url text,
  created_at timestamptz not null default now(),
  updated_at timestamptz,
  unique (account_id, logical_id)
);

-- The resources a project manages. physical_id is the resource's own id as text (a check's uuid, a group's
-- number, or for a subscription `<channel>:check:<uuid>` / `<channel>:group:<id>`). payload_hash is the hash of
-- the body last applied with its references resolved: a deploy that would send the same body writes nothing.
create table project_resources (
  project_id uuid not null references projects (id) on delete cascade,
  type text not null,
  logical_id text not null,
  physical_id text not null,
  payload_hash text,
  updated_at timestamptz not null default now(),
  primary key (project_id, type, logical_id)
);
create index project_resources_physical on project_resources (type, physical_id);

-- Each deploy or destroy. At most one is PENDING or RUNNING per project: the running one holds a transaction
-- advisory lock, so one whose process died is found (the lock is free) and marked FAILED by the next caller.
create table project_deployments (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  project_logical_id text not null,
  kind text not null check (kind in ('DEPLOY', 'DESTROY')),
  status text not null check (status in ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
  dry_run boolean not null default false,
  progress integer not null default 0 check (progress between 0 and 100),
  error jsonb,
  result jsonb,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  ended_at timestamptz,
  cancel_requested_at timestamptz
);
create index project_deployments_project on project_deployments (account_id, project_logical_id, created_at desc);
create index project_deployments_active on project_deployments (account_id, project_logical_id) where status in ('PENDING', 'RUNNING');

-- Import plans: resources made outside any project, offered to one (`checkly import plan`), then applied
-- (the project manages them) and committed (the plan is closed).
create table project_imports (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  project_id uuid not null references projects (id) on delete cascade,
  preview boolean not null default false,
  changes jsonb not null,
  created_at timestamptz not null default now(),
  applied_at timestamptz,
  committed_at timestamptz
);
create index project_imports_project on project_imports (project_id, created_at);
