-- Console users an operator can disable (every session ends with it), and sessions found by
-- their user so that disabling, a new password or "log out everywhere" ends all of them at once.
alter table console_users add column disabled_at timestamptz;
create index console_sessions_user on console_sessions ((data ->> 'userId'));
