"""Storing comments (bugs.md section 9): numbering, normalisation, limits."""

from .. import dates
from ..errors import ServiceError

COMMENT_TOO_LONG = 114
MAX_COMMENT_LENGTH = 65535

# comments.kind values
PLAIN, DUPE_OF, HAS_DUPE, ATTACHMENT_CREATED, ATTACHMENT_UPDATED = 0, 2, 3, 5, 6


def normalise(text):
    """Comment text as stored: CRLF/CR become LF, trailing whitespace removed.

    Errors: 114 when longer than 65535 characters.
    """
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if len(text) > MAX_COMMENT_LENGTH:
        raise ServiceError(COMMENT_TOO_LONG, f"A comment cannot be longer than {MAX_COMMENT_LENGTH} "
                                             "characters.")
    return text


def insert(conn, bug_id, author_id, body, when, is_private=False, work_time=0.0, kind=PLAIN,
           extra=None, attachment_id=None):
    """Store a comment as the bug's next one (count 0 is the description).

    body: already normalised text. when: aware datetime. Returns the new id.
    """
    count = conn.execute("SELECT COALESCE(MAX(count) + 1, 0) FROM comments WHERE bug_id = ?",
                         (bug_id,)).fetchone()[0]
    cur = conn.execute(
        "INSERT INTO comments (bug_id, count, author_id, created_at, body, is_private, work_time,"
        " kind, extra, attachment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (bug_id, count, author_id, dates.to_db(when), body, 1 if is_private else 0, work_time or 0,
         kind, extra, attachment_id))
    return cur.lastrowid
