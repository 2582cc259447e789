"""@mentions in comments: which accounts a comment's @names mean (a login,
or the part of a login before its @ when exactly one enabled account's login
starts so), for bug mail's "Mentioned"
reason and its webhook event. Who may hear of a mention (see the bug and
the comment) is decided when the mail or call is made, as the recipient."""

from ..store.db import placeholders
from . import markup


def resolve(conn, names):
    """{name: account id} of the lower-cased @`names` that mean exactly one
    enabled account (markup.pick_mentioned's rule; names meaning none or
    several are left out)."""
    names = list(dict.fromkeys(names))[:markup.MAX_MENTIONS]
    if not names:
        return {}
    likes = " OR ".join("lower(login) LIKE ? ESCAPE '\\'" for _ in names)
    rows = conn.execute(
        "SELECT id, login, real_name FROM users WHERE disabled_text = ''"
        f" AND (lower(login) IN ({placeholders(names)}) OR {likes})",
        names + [_local_part_pattern(name) for name in names]).fetchall()
    accounts = [{"id": row["id"], "login": row["login"], "real_name": row["real_name"]}
                for row in rows]
    return {name: account["id"] for name, account in
            markup.pick_mentioned(names, accounts).items()}


def _local_part_pattern(name):
    """A LIKE pattern for logins whose part before '@' is `name`."""
    escaped = name.split("@", 1)[0].replace("\\", "\\\\").replace("%", "\\%").replace(
        "_", "\\_")
    return escaped + "@%"


def mentioned(conn, comment_ids):
    """{comment id: set of account ids it @mentions} of `comment_ids`
    (plain comments only; not their authors)."""
    result = {}
    ids = sorted(set(comment_ids))
    if not ids:
        return result
    for row in conn.execute("SELECT id, author_id, body, is_markdown FROM comments"
                            f" WHERE kind = 0 AND id IN ({placeholders(ids)})", ids).fetchall():
        names = markup.mention_names(row["body"], bool(row["is_markdown"]))
        people = set(resolve(conn, names).values()) - {row["author_id"]}
        if people:
            result[row["id"]] = people
    return result
