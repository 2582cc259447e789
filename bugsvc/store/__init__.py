"""Storage, the ground the house stands on: the Database contract each
engine keeps (db.py; sqlite.py, postgres/), where the database is and which
engine keeps it (location.py), the schema and its versions (schema.py), the
dialects and the Connection a dialect runs on, as types (dialect.py), the
REGEXP function (regexp.py), server secrets (server_secrets.py),
process-wide copies of the catalogue (cache.py), the audit log (audit.py),
the outbox (outbox.py), online backups (backup.py) and copies to another
engine (convert.py). It knows the schema, not what goes in it: it imports
nothing of the domain (the installation data is the catalogue's)."""
