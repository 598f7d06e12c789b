-- What an API key resolves to (its account, role, person and second factor) is kept a few seconds per process
-- (src/accounts/principal-cache.ts). Every committed change to what it is made of is announced on the channel
-- `auth_changed`, and each process forgets what it kept. A key's last use alone announces nothing.
create function announce_auth_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('auth_changed', '');
  return null;
end $$;

create trigger api_keys_auth_change after insert or delete on api_keys
  for each statement execute function announce_auth_change();
create trigger api_keys_auth_update after update on api_keys
  for each row when ((to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at'))
  execute function announce_auth_change();
create trigger memberships_auth_change after insert or update or delete on memberships
  for each statement execute function announce_auth_change();
create trigger account_members_auth_change after insert or update or delete on account_members
  for each statement execute function announce_auth_change();
create trigger accounts_auth_change after insert or update or delete on accounts
  for each statement execute function announce_auth_change();
create trigger users_auth_change after update of email, totp_enabled_at or delete on users
  for each statement execute function announce_auth_change();
