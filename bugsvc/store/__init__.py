"""Storage: connections, transactions, schema versions and the regular
expression function (db.py), the default installation data (install.py),
server secrets (server_secrets.py), process-wide copies of the catalogue
(cache.py), the audit log (audit.py) and online backups (backup.py)."""
