-- Check state judges a batch's runs by its account's alert settings and maintenance windows as well as by its checks
-- (src/state/basis-cache.ts): ingest kept the checks' bases between batches but read the account's settings and
-- windows for every batch, twice (the runs a window pauses, then the state transaction). Their committed changes are
-- now announced on `definitions_changed` too, with the account's id, and each process forgets what it kept of that
-- account. Only a change of `alert_settings` announces an account: its other columns change for other reasons.
create trigger maintenance_windows_definition_change after insert or update or delete on maintenance_windows
  for each row execute function announce_definition_change();

create function announce_alert_settings_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('definitions_changed', new.id::text);
  return null;
end $$;

create trigger accounts_alert_settings_change after update of alert_settings on accounts
  for each row when (old.alert_settings is distinct from new.alert_settings)
  execute function announce_alert_settings_change();
