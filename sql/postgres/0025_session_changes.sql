-- Browser sessions are resolved from the same per-process cache as API keys (src/accounts/principal-cache.ts): a
-- session that ends (sign-out, a password change, an operator's update) or changes its scope is announced on
-- `auth_changed` like a key's change, and every process forgets what it kept. Its last-seen stamp, written at most a
-- minute apart while it is used, announces nothing (the cache bounds an entry by the session's idle end instead).
create trigger user_sessions_auth_update after update on user_sessions
  for each row when (old.ended_at is distinct from new.ended_at or old.expires_at is distinct from new.expires_at
    or old.account_id is distinct from new.account_id or old.second_factor is distinct from new.second_factor
    or old.token_hash is distinct from new.token_hash or old.user_id is distinct from new.user_id)
  execute function announce_auth_change();
create trigger user_sessions_auth_delete after delete on user_sessions
  for each statement execute function announce_auth_change();
