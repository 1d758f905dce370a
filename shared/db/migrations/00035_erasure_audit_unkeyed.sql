-- `erase` named the erased person in the audit trail by a plain SHA-256 of their phone number,
-- which trying every number undoes (minutes for a whole country's). It now names them by an HMAC
-- under ERASURE_AUDIT_KEY, a key kept outside the database. The names written before cannot be
-- re-keyed here, where the key is not, so they are removed; each row keeps who erased, when, and
-- which orders.
update audit_log set subject = 'phone (unkeyed name removed)' where action = 'person.erase' and subject ~ '^phone [0-9a-f]{16}$';
