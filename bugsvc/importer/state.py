"""Where an import stands, kept in the target database itself (table
import_state), and written in the same transaction as the data it speaks
of: a run stopped at any moment (an error, Ctrl-C, a killed process) finds
either a page of bugs with the cursor past it, or neither.

Names:
- source: the REST root the target was filled from; another source is
  refused (a second import into the same database would mix two trackers).
- login: the key's account at the source, when known.
- run.started: the source's time when the current run began (its /rest/time).
- run.since: the lower bound of the current run's bugs ('' for all bugs).
- run.cursor: the highest bug id the current run has written.
- last.started: run.started of the last run that finished; the next run
  reads the bugs changed since then, less the overlap.
- see_also.old: the old installation's addresses (a JSON list) whose
  show_bug.cgi links See Also rewrites; see_also.new: the new
  installation's address they were rewritten to ('' when they were not).
- controls.unknown: the products whose group controls the source did not
  show (a JSON list): set by hand.
"""

SOURCE, LOGIN = "source", "login"
LINKS_OLD, LINKS_NEW = "see_also.old", "see_also.new"
CONTROLS_UNKNOWN = "controls.unknown"
RUN_STARTED, RUN_SINCE, RUN_CURSOR = "run.started", "run.since", "run.cursor"
LAST_STARTED = "last.started"
_RUN_KEYS = (RUN_STARTED, RUN_SINCE, RUN_CURSOR)


def load(conn):
    """Every name to its value."""
    return {row[0]: row[1] for row in conn.execute("SELECT name, value FROM import_state")}


def put(conn, name, value):
    """Store one value (None removes it)."""
    if value is None:
        conn.execute("DELETE FROM import_state WHERE name = ?", (name,))
        return
    conn.execute("INSERT INTO import_state (name, value) VALUES (?, ?)"
                 " ON CONFLICT (name) DO UPDATE SET value = excluded.value", (name, str(value)))


def begin_run(conn, started, since):
    """Record a new run: its start time and lower bound, no bug written yet."""
    put(conn, RUN_STARTED, started)
    put(conn, RUN_SINCE, since or "")
    put(conn, RUN_CURSOR, 0)


def advance(conn, cursor):
    """The current run has written every bug up to id `cursor`."""
    put(conn, RUN_CURSOR, cursor)


def finish_run(conn):
    """The current run is done: its start becomes the base of the next one."""
    values = load(conn)
    put(conn, LAST_STARTED, values.get(RUN_STARTED))
    for name in _RUN_KEYS:
        put(conn, name, None)


class Run:
    """An unfinished run as stored: started, since (None: every bug), cursor."""

    def __init__(self, values):
        self.started = values.get(RUN_STARTED)
        self.since = values.get(RUN_SINCE) or None
        self.cursor = int(values.get(RUN_CURSOR) or 0)


def unfinished(values):
    """The stored unfinished run, or None."""
    return Run(values) if values.get(RUN_STARTED) else None
