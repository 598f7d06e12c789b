-- A runner keeps the definitions of the checks it runs on schedule (src/runners/definition-cache.ts): a check with its
-- group's settings, the account's variables (opened) and the snippets its scripts use. Every committed change of what
-- a definition is made of is announced on `definitions_changed` with the account's id as payload, and each process
-- forgets what it kept of that account. Postgres delivers one announcement per account and transaction (identical
-- payloads are folded), so a deploy of thousands of checks announces once.
create function announce_definition_change() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    perform pg_notify('definitions_changed', old.account_id::text);
  else
    perform pg_notify('definitions_changed', new.account_id::text);
    if tg_op = 'UPDATE' and old.account_id is distinct from new.account_id then
      perform pg_notify('definitions_changed', old.account_id::text);
    end if;
  end if;
  return null;
end $$;

create trigger checks_definition_change after insert or update or delete on checks
  for each row execute function announce_definition_change();
create trigger check_groups_definition_change after insert or update or delete on check_groups
  for each row execute function announce_definition_change();
create trigger variables_definition_change after insert or update or delete on variables
  for each row execute function announce_definition_change();
create trigger snippets_definition_change after insert or update or delete on snippets
  for each row execute function announce_definition_change();
