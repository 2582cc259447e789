"""What statements answered about bugs while no bug changes: a serving
process's copy of answers that stand as long as the bug generation the
reading transaction sees (schema.sql's bug generation section: every write
to a bug and to what its object, its revision and a caller's sight of it
read moves it, whoever makes it).

object_cache.py keeps, per bug generation, the bugs' stamps it read (the
revision, with the last change time where an update token is made of
it), which bugs each caller may see, and each caller's update tokens, so
that another call at the same generation takes them instead of reading
(or making) them again. At a new generation all of them are forgotten.
On PostgreSQL the bug generation is read in the transaction's snapshot
(the dialect's bug_generation_sql): kept only from calls whose statements
all see one snapshot (a read call's REPEATABLE READ transaction, or one
statement).

Bounded: answers counted at ENTRY_BYTES each and the bytes their callers
say they hold besides, at most MAX_BYTES in all; past it they are
forgotten and gathered anew. Threads share one copy: a generation's
answers are replaced whole (one tuple swapped), and only ever added to.
"""


MAX_BYTES = 16 * 1024 * 1024
# What one answer takes in its dict (its key and value; measured with
# tracemalloc: tests/bugs/test_seen_at.py).
ENTRY_BYTES = 256


class SeenAtGeneration:
    """The answers seen at one bug generation, by scope (whose answers
    they are: a hashable)."""

    def __init__(self, max_bytes=MAX_BYTES):
        self.max_bytes = max_bytes
        self._at = (None, {})
        self._bytes = 0

    @property
    def size(self):
        """Memory counted for the answers of the current generation."""
        return self._bytes

    @property
    def latest(self):
        """The bug generation of the answers kept (None before any)."""
        return self._at[0]

    def answers(self, generation, scope=None):
        """The answers ({key: value}) given at `generation` for `scope`, to
        read and add() to: new ones at another generation (the others
        then forgotten), or past the bound. At no generation (None: a
        transaction that does not read it, a PostgreSQL write) nothing is
        kept: an empty dict of its own each time."""
        if generation is None:
            return {}
        at, scopes = self._at
        if at != generation or self._bytes > self.max_bytes:
            scopes = {}
            self._at = (generation, scopes)
            self._bytes = 0
        found = scopes.get(scope)
        if found is None:
            found = scopes.setdefault(scope, {})
        return found

    def add(self, answers, new, held=0):
        """Add `new` ({key: value}) to `answers` (of answers()), holding
        `held` bytes besides their entries."""
        answers.update(new)
        self._bytes += len(new) * ENTRY_BYTES + held
