"""Code forge repositories registered by administrators (a bugsvc
extension): which repository of which forge may send events to
/hooks/<forge>, the secret that proves an event is the repository's, the
branches on which a fixing commit resolves bugs, and the account that acts
for commits whose author has no account; and the record of what events
already did to bugs, so that an event delivered again does nothing more.

Secrets are kept as given (a signature is checked with the secret itself)
and never shown again."""

import re

from .. import dates
from ..errors import (
    AUTH_FAILURE,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    USER_ERROR,
    ServiceError,
)
from ..store import audit


FORGES = ("github", "gitlab", "gitea")
_NAME = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+")
_BRANCH = re.compile(r"[^\s,~^:?*\[\\]{1,255}")
MAX_SECRET = 255
MIN_SECRET = 8
_COLUMNS = ("SELECT r.id, r.forge, r.repository, r.secret, r.branches, r.hash_references,"
            " r.bot_account_id, u.login AS bot_login, r.created_at"
            " FROM forge_repositories r LEFT JOIN users u ON u.id = r.bot_account_id")


def require_admin(ctx):
    """Errors: 410 logged out (the operation's rule); 304 not an administrator."""
    if not ctx.caller.in_group("admin"):
        raise ServiceError(AUTH_FAILURE, "Only administrators (group 'admin') may see and "
                                         "change the registered code forge repositories.")


def listed(ctx):
    """Every registered repository as the API shows it (never its secret)."""
    require_admin(ctx)
    rows = ctx.conn.execute(_COLUMNS + " ORDER BY r.forge, lower(r.repository)").fetchall()
    return [_shown(row) for row in rows]


def create(ctx, forge, repository, secret, branches, bot_account, hash_references):
    """Register a repository; returns its id.

    Errors: 304 not an administrator; 50 forge, repository or secret
    missing; 51 an unknown bot account; 32000 an unknown forge, a name that
    is not owner/name, a secret too short or long, a bad branch name, or a
    repository already registered."""
    require_admin(ctx)
    for name, value in (("forge", forge), ("repository", repository), ("secret", secret)):
        if not value:
            raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must give the {name}.")
    values = {"forge": _forge(forge), "repository": _repository(repository),
              "secret": _secret(secret), "branches": _branches(branches),
              "hash_references": int(bool(hash_references)),
              "bot_account_id": _account(ctx, bot_account)}
    _refuse_duplicate(ctx, values["forge"], values["repository"])
    repository_id = ctx.conn.execute(
        "INSERT INTO forge_repositories (forge, repository, secret, branches, hash_references,"
        " bot_account_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (values["forge"], values["repository"], values["secret"], values["branches"],
         values["hash_references"], values["bot_account_id"], dates.to_db(ctx.now))).lastrowid
    audit.record(ctx, "ForgeRepository", repository_id)
    return repository_id


def update(ctx, repository_id, given):
    """Change a registration: `given` holds any of repository, secret,
    branches, bot_account (None or "" for none), hash_references.
    Returns {field: {"removed", "added"}} (a secret shows as "********").
    Errors: 304; 51 no such registration or bot account; 32000 as create."""
    require_admin(ctx)
    row = _row(ctx.conn, repository_id)
    new = {}
    if "repository" in given:
        new["repository"] = _repository(given["repository"])
        if new["repository"].lower() != row["repository"].lower():
            _refuse_duplicate(ctx, row["forge"], new["repository"])
    if "secret" in given:
        new["secret"] = _secret(given["secret"])
    if "branches" in given:
        new["branches"] = _branches(given["branches"])
    if "hash_references" in given:
        new["hash_references"] = int(bool(given["hash_references"]))
    if "bot_account" in given:
        new["bot_account_id"] = _account(ctx, given["bot_account"])
    changes = {}
    for column, value in new.items():
        if value == row[column]:
            continue
        ctx.conn.execute(f"UPDATE forge_repositories SET {column} = ? WHERE id = ?",
                         (value, repository_id))
        name = "bot_account" if column == "bot_account_id" else column
        if column == "secret":
            changes[name] = {"removed": "********", "added": "********"}
        elif column == "bot_account_id":
            changes[name] = {"removed": row["bot_login"] or "",
                             "added": given["bot_account"] or ""}
        else:
            changes[name] = {"removed": _text(row[column]), "added": _text(value)}
    audit.record_changes(ctx, "ForgeRepository", repository_id, changes)
    return changes


def delete(ctx, repository_id):
    """Remove a registration and its record of links. Errors: 304; 51."""
    require_admin(ctx)
    row = _row(ctx.conn, repository_id)
    ctx.conn.execute("DELETE FROM forge_links WHERE repository_id = ?", (repository_id,))
    ctx.conn.execute("DELETE FROM forge_repositories WHERE id = ?", (repository_id,))
    audit.record(ctx, "ForgeRepository", repository_id, None, "__remove__", None,
                 name=row["repository"])


def registered(conn, forge, repository):
    """The registration of `repository` (owner/name, any case) on `forge`
    as a dict with its secret, or None."""
    if not isinstance(repository, str) or not repository:
        return None
    row = conn.execute(_COLUMNS + " WHERE r.forge = ? AND lower(r.repository) = lower(?)",
                       (forge, repository)).fetchone()
    if row is None:
        return None
    found = dict(row)
    found["branches"] = [name for name in row["branches"].split(",") if name]
    return found


def account_for_address(conn, address):
    """The id of the enabled account whose login is e-mail `address`, or None."""
    if not isinstance(address, str) or "@" not in address:
        return None
    row = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?) AND disabled_text = ''",
                       (address,)).fetchone()
    return row[0] if row is not None else None


def linked(conn, repository_id, kind, ref, bug_id):
    """True when an event of the repository already did `kind` for `ref` to the bug."""
    return conn.execute("SELECT 1 FROM forge_links WHERE repository_id = ? AND kind = ? AND"
                        " ref = ? AND bug_id = ?", (repository_id, kind, ref, bug_id)
                        ).fetchone() is not None


def link(ctx, repository_id, kind, ref, bug_id):
    """Record that an event did `kind` for `ref` to the bug (in the change's transaction)."""
    ctx.conn.execute("INSERT INTO forge_links (repository_id, kind, ref, bug_id, created_at)"
                     " VALUES (?, ?, ?, ?, ?)",
                     (repository_id, kind, ref, bug_id, dates.to_db(ctx.now)))


# Checking values -------------------------------------------------------------------

def _invalid(message):
    return ServiceError(USER_ERROR, message)


def _forge(value):
    if value not in FORGES:
        raise _invalid(f"'{value}' is not a forge bugsvc receives events from: "
                       f"{', '.join(FORGES)} (gitea also serves Forgejo).")
    return value


def _repository(value):
    if not isinstance(value, str) or len(value) > 255 or not _NAME.fullmatch(value.strip()):
        raise _invalid("The repository must be its full name as the forge's events give it, "
                       "such as owner/name (GitLab: group/subgroup/name).")
    return value.strip()


def _secret(value):
    if not isinstance(value, str) or not MIN_SECRET <= len(value) <= MAX_SECRET:
        raise _invalid(f"The secret must be a text of {MIN_SECRET} to {MAX_SECRET} characters.")
    return value


def _branches(value):
    if value is None or value == "":
        return ""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise _invalid("The branches must be a list of branch names.")
    names = [name.strip() for name in names if name.strip()]
    for name in names:
        if not _BRANCH.fullmatch(name):
            raise _invalid(f"'{name}' is not a branch name.")
    return ",".join(dict.fromkeys(names))


def _account(ctx, login):
    if login is None or login == "":
        return None
    row = ctx.conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                           (str(login),)).fetchone()
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no account named '{login}'.")
    return row[0]


def _refuse_duplicate(ctx, forge, repository):
    if registered(ctx.conn, forge, repository) is not None:
        raise _invalid(f"{forge} repository {repository} is already registered.")


def _row(conn, repository_id):
    row = conn.execute(_COLUMNS + " WHERE r.id = ?", (repository_id,)).fetchone()
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST,
                           f"There is no registered repository with the id {repository_id}.")
    return row


def _text(value):
    return str(value) if value is not None else ""


def _shown(row):
    return {"id": row["id"], "forge": row["forge"], "repository": row["repository"],
            "branches": [name for name in row["branches"].split(",") if name],
            "hash_references": bool(row["hash_references"]),
            "bot_account": row["bot_login"], "hook": f"/hooks/{row['forge']}",
            "created": dates.from_db(row["created_at"])}
