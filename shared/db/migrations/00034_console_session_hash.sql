-- A console session is kept by the SHA-256 of its id (as courier sessions are, and API keys,
-- courier tokens and set-password links): a read of the table gives nobody a session to replay.
-- The column keeps its name, `id`, and now holds that hash, so consoles of the image before this
-- one, still running while the new one rolls out, find no session (their users log in again)
-- rather than fail on a column gone; a rollback logs people out, nothing more. Sessions open now
-- are kept: each id is replaced by its hash, which their cookies still match.
delete from console_sessions where expires_at <= now();
update console_sessions set id = encode(sha256(convert_to(id, 'UTF8')), 'hex');
