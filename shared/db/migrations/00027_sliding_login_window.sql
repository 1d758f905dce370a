-- Five failed logins within any 15 minutes lock a console account, or a courier phone, for 15
-- (DESIGN 12 and 14; shared/accounts/login-rule.ts). Until now a count ran from the first failure
-- and restarted when its 15 minutes were up, so four failures at the end of one window and four
-- at the start of the next never locked. The rule now keeps the time of each failure still in the
-- window (four at most: the fifth locks and clears them) and counts the 15 minutes before each try.
alter table console_users add column failed_login_times timestamptz[] not null default '{}';
alter table courier_login_failures add column failed_login_times timestamptz[] not null default '{}';

-- Failures counted so far carry over, each at the start of its window, the one time the count
-- kept: they count as long as the old rule would have counted them.
update console_users set failed_login_times = array_fill(failures_since, array[failed_logins])
where failed_logins > 0 and failures_since is not null;
update courier_login_failures set failed_login_times = array_fill(failures_since, array[failed_logins])
where failed_logins > 0 and failures_since is not null;

-- failed_logins and failures_since stay: this runs before a rollout (deploy/README.md), and the
-- previous image's pods read and write them until it ends. Nothing reads them from now on; a
-- later release drops them.
-- While both run, each image counts the failures it sees in its own columns and only
-- locked_until is shared: for that window an account may take up to 4 wrong tries on each.
