"""Storage: connections, transactions and the choice of engine (db.py;
sqlite.py, postgres/), the schema and its versions (schema.py), the REGEXP
function (regexp.py), server secrets (server_secrets.py), process-wide
copies of the catalogue (cache.py), the audit log (audit.py) and online
backups (backup.py). It knows the schema, not what goes in it: it imports
nothing of the domain (the installation data is the catalogue's)."""
