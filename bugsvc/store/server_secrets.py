"""Server secrets kept in the database (the server_secrets table): made when
the database is installed, read by whatever signs with them, so every
process serving one database signs alike."""

import secrets
from typing import Any

from .db import Database
from .dialect import Connection


UPDATE_TOKEN = "update_token"   # the key of bugs' update_token HMACs
WEB_FORMS = "web_forms"         # the key of the web pages' form tokens and signed links
MAIL_REPLY = "mail_reply"       # the key of the tokens in bug mail's Reply-To addresses
NAMES = (UPDATE_TOKEN, WEB_FORMS, MAIL_REPLY)


def new_secret() -> str:
    """A fresh random secret (64 hex digits)."""
    return secrets.token_hex(32)


def install(conn: Connection) -> None:
    """Store a fresh value of every secret (a new database)."""
    conn.executemany("INSERT INTO server_secrets (name, value) VALUES (?, ?)",
                     [(name, new_secret()) for name in NAMES])


def secret(conn: Connection, name: str) -> str:
    """The value of secret `name`; a database installed without it gets one
    on first use."""
    row = conn.execute("SELECT value FROM server_secrets WHERE name = ?", (name,)).fetchone()
    if row is not None:
        return row[0]
    conn.execute("INSERT INTO server_secrets (name, value) VALUES (?, ?)"
                 " ON CONFLICT (name) DO NOTHING", (name, new_secret()))
    return conn.execute("SELECT value FROM server_secrets WHERE name = ?", (name,)).fetchone()[0]


def load(db: Database[Any], name: str) -> str:
    """The value of secret `name` of Database `db`, read (and, for a
    database installed without it, made) in a transaction of its own."""
    with db.transaction(write=True) as conn:
        return secret(conn, name)
