-- Per-service database roles: the migration Job alone may change the schema; every service
-- reads and writes rows and nothing more, so a compromised service cannot drop or alter tables.
--
-- Run once per database, as an administrator, connected to the courier database:
--   psql "postgres://ADMIN@HOST:5432/courier" -v ON_ERROR_STOP=1 -f deploy/postgres/roles.sql
-- then give each login role its password from your secret store (never in this file):
--   ALTER ROLE courier_gateway PASSWORD '…';   -- and the same for every role below
-- and put the matching URLs in deploy/k8s/secrets.env (DATABASE_URL_MIGRATE = courier_owner, …).
-- Idempotent: safe to run again after adding a role. The schema is `public` (DATABASE_SCHEMA).

DO $$
DECLARE
  login_role text;
BEGIN
  -- Owns every table: the migrate Job connects as it and may run DDL.
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'courier_owner') THEN
    CREATE ROLE courier_owner LOGIN;
  END IF;
  -- What every service may do, granted once; each service logs in as its own member role.
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'courier_app') THEN
    CREATE ROLE courier_app NOLOGIN;
  END IF;
  FOREACH login_role IN ARRAY ARRAY['courier_gateway', 'courier_pricing', 'courier_worker', 'courier_webhook_sender', 'courier_console', 'courier_dispatcher'] LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = login_role) THEN
      EXECUTE format('CREATE ROLE %I LOGIN IN ROLE courier_app', login_role);
    END IF;
  END LOOP;

  -- Only these roles connect; the owner may create the schema named in DATABASE_SCHEMA.
  EXECUTE format('REVOKE ALL ON DATABASE %I FROM PUBLIC', current_database());
  EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO courier_app', current_database());
  EXECUTE format('GRANT CONNECT, CREATE ON DATABASE %I TO courier_owner', current_database());
END
$$;

-- The schema: the owner creates in it, services only use it.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO courier_owner;
GRANT USAGE ON SCHEMA public TO courier_app;

-- Rows, not structure: DML on every table and sequence the owner has made or will make.
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO courier_app;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO courier_app;
ALTER DEFAULT PRIVILEGES FOR ROLE courier_owner IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO courier_app;
ALTER DEFAULT PRIVILEGES FOR ROLE courier_owner IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO courier_app;
