-- What the anchor API's account shape carries: the default runtime of new checks, and the account-wide
-- alert settings a check uses while useGlobalAlertSettings is true (the anchor's default values).
alter table accounts
  add column runtime_id text not null default '2025.04',
  add column alert_settings jsonb not null default
    '{"escalationType":"RUN_BASED","runBasedEscalation":{"failedRunThreshold":1},"reminders":{"amount":0,"interval":5},"parallelRunFailureThreshold":{"enabled":false,"percentage":10}}';
