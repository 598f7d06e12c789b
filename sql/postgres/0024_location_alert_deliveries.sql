-- A private location's alerts ("no agent for 10 minutes", "an agent again") are deliveries like any check alert's:
-- recorded per channel with every attempt, so they show in /v1/alert-notifications and count in a channel's health.
-- Such a delivery has no check alert; it names its location and the change it announces instead.
alter table alert_notifications alter column alert_id drop not null;
alter table alert_notifications add column private_location_id uuid references private_locations (id) on delete cascade;
-- The change it announces (the location and the outage): one delivery per change and channel, however often found.
alter table alert_notifications add column location_change text;
alter table alert_notifications add constraint alert_notifications_subject
  check ((alert_id is not null and private_location_id is null) or (alert_id is null and private_location_id is not null and location_change is not null));
create unique index alert_notifications_location_change on alert_notifications (location_change, alert_channel_id) where location_change is not null;
