-- The console (docs/contracts.md section 10): its users, their sessions, one-time links to set a
-- password, and the audit trail of operator actions. Console users are not API keys.
create table console_users (
  id               uuid primary key,
  email            text not null,
  role             text not null check (role in ('operator', 'business')),
  business_id      uuid references businesses(id),
  -- scrypt, as `scrypt$N$r$p$salt$hash` (base64url); null until the user sets one.
  password_hash    text,
  -- Failed logins since `failures_since`; five within 15 minutes lock the account until `locked_until`.
  failed_logins    integer not null default 0,
  failures_since   timestamptz,
  locked_until     timestamptz,
  created_at       timestamptz not null default now(),
  check ((role = 'business') = (business_id is not null))
);
create unique index console_users_email on console_users (lower(email));

create table console_password_tokens (
  token_hash  text primary key,
  user_id     uuid not null references console_users(id) on delete cascade,
  expires_at  timestamptz not null,
  used_at     timestamptz
);

-- @fastify/session's store: the session as JSON, gone at `expires_at` or at logout.
create table console_sessions (
  id          text primary key,
  data        jsonb not null,
  expires_at  timestamptz not null
);
create index console_sessions_expiry on console_sessions (expires_at);

create table audit_log (
  id           bigserial primary key,
  at           timestamptz not null default now(),
  -- Who: a console user's e-mail, or `cli:<os user>` for the operator CLI.
  actor        text not null,
  action       text not null,
  business_id  uuid,
  subject      text not null,
  before       jsonb,
  after        jsonb
);
create index audit_log_business on audit_log (business_id, id desc);
