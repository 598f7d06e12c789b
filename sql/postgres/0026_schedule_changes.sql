-- The scheduler keeps check_schedules in step with the checks (src/runners/scheduler.ts). Reading every runnable
-- check every few seconds to find the few that changed cost the service more as checks grew (at 10,000 checks, twelve
-- reads of every check and a hash of every id a minute, against 10,000 runs). What the schedules are made of (a
-- check's type, activation, frequency and offset, account and group; a group's frequency and activation) is now
-- announced on `schedules_changed` when a commit changes it, and the scheduler reconciles when told (and once a
-- minute anyway, in case an announcement was missed).
create function announce_schedule_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('schedules_changed', '');
  return null;
end $$;

create trigger checks_schedule_change after insert or delete on checks
  for each statement execute function announce_schedule_change();
create trigger checks_schedule_update after update on checks
  for each row when (old.id is distinct from new.id or old.check_type is distinct from new.check_type
    or old.activated is distinct from new.activated or old.frequency is distinct from new.frequency
    or old.account_id is distinct from new.account_id or old.group_id is distinct from new.group_id
    or old.data->'frequencyOffset' is distinct from new.data->'frequencyOffset')
  execute function announce_schedule_change();
create trigger check_groups_schedule_change after delete on check_groups
  for each statement execute function announce_schedule_change();
create trigger check_groups_schedule_update after update on check_groups
  for each row when (old.data->'frequency' is distinct from new.data->'frequency'
    or old.data->'activated' is distinct from new.data->'activated')
  execute function announce_schedule_change();
