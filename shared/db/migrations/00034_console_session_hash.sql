-- A console session is kept by the SHA-256 of its id (as courier sessions are, and API keys,
-- courier tokens and set-password links): a read of the table gives nobody a session to replay.
-- Sessions open now are kept: each id is replaced by its hash, which their cookies still match.
alter table console_sessions rename column id to id_hash;
update console_sessions set id_hash = encode(sha256(convert_to(id_hash, 'UTF8')), 'hex');
