-- Alert-channel settings the anchor API has: SSL-expiry alerts and subscribing new checks automatically.
alter table alert_channels
  add column ssl_expiry boolean not null default false,
  add column ssl_expiry_threshold integer not null default 30,
  add column auto_subscribe boolean not null default false;
