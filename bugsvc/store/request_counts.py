"""Calls counted per subject, rule and window, shared by every server
process (the table request_counts): the rate limits and the throttling of
account requests (bugsvc/api/limits.py) add what they counted and read the
totals of all processes back."""

from .dialect import Connection


# (subject, rule, slot): a window of one rule's count for one subject.
Window = tuple[str, str, int]


def add(conn: Connection, counts: dict[tuple[str, str, int, int], int]) -> dict[Window, int]:
    """Add counted calls and return the totals now stored.

    counts: {(subject, rule, slot, ends_at): calls}. Returns {(subject,
    rule, slot): total calls of every process}."""
    totals: dict[Window, int] = {}
    for (subject, rule, slot, ends_at), calls in sorted(counts.items()):
        row = conn.execute(
            "INSERT INTO request_counts (subject, rule, slot, calls, ends_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (subject, rule, slot)"
            " DO UPDATE SET calls = request_counts.calls + excluded.calls RETURNING calls",
            (subject, rule, slot, calls, ends_at)).fetchone()
        totals[(subject, rule, slot)] = row[0]
    return totals


def total(conn: Connection, subject: str, rule: str, slot: int) -> int:
    """The calls stored for one subject, rule and window (0 when none)."""
    row = conn.execute("SELECT calls FROM request_counts WHERE subject = ? AND rule = ?"
                       " AND slot = ?", (subject, rule, slot)).fetchone()
    return row[0] if row else 0


def forget(conn: Connection, before: int) -> None:
    """Drop the windows that ended before `before` (seconds since 1970)."""
    conn.execute("DELETE FROM request_counts WHERE ends_at < ?", (before,))
