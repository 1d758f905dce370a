-- The courier web app (DESIGN 14): a rider logs in with their phone and a one-time code the
-- operator hands them (`courier:code`), and stays logged in by a server-side session of their own,
-- apart from the console's users.

-- At most one live code per courier (a new one replaces it); only its SHA-256 is stored, and a
-- login spends it.
create table courier_login_codes (
  courier_id  uuid primary key references couriers(id),
  code_hash   text not null,
  expires_at  timestamptz not null,
  created_at  timestamptz not null default now()
);

-- Wrong codes per phone number (digits and a leading +, as typed), whether a courier has it or
-- not: five within 15 minutes lock that phone's logins for 15, as the console locks an account.
create table courier_login_failures (
  phone           text primary key,
  failed_logins   integer not null default 0,
  failures_since  timestamptz,
  locked_until    timestamptz
);

-- A rider's session: found by the SHA-256 of its cookie's id, gone at logout, at `expires_at`,
-- or when the courier is disabled.
create table courier_sessions (
  id_hash     text primary key,
  courier_id  uuid not null references couriers(id),
  flash       jsonb,
  expires_at  timestamptz not null,
  created_at  timestamptz not null default now()
);
create index courier_sessions_courier on courier_sessions (courier_id);
create index courier_sessions_expiry on courier_sessions (expires_at);
