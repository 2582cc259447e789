"""What differs between the engines, behind one interface: every SQL
spelling that is not shared by SQLite and PostgreSQL is a method here, and
code outside bugsvc/store/ reaches it as `conn.dialect`.

Everything else is written once, in the SQL both engines run: `?`
placeholders, `INSERT ... RETURNING id` for new ids, `ON CONFLICT ... DO
NOTHING / DO UPDATE` for upserts, `lower(x)` on both sides for
case-insensitive comparisons (both fold ASCII letters only: PostgreSQL's
text columns use the "C" collation), `lower(x) LIKE lower(?) ESCAPE '\\'`
for patterns, `<> 0` for flags stored as integers (PostgreSQL has no
truthy integers), an alias for every subquery in FROM.
"""


# The columns the bug text index holds: the bugs' summary and whiteboard,
# the aliases' alias.
TEXT_INDEXED = ("summary", "whiteboard", "alias", "comment")
# Trigram indexes find no text shorter than a trigram.
TRIGRAM = 3


class Dialect:
    """The interface; sqlite.py and postgres/dialect.py implement it."""

    name = None                 # "sqlite" or "postgresql"
    # An ORDER BY term giving rows in the order they were stored (migrations only).
    insertion_order = None

    # Text ------------------------------------------------------------------------

    def contains(self, haystack, needle):
        """SQL true when the text `needle` occurs in `haystack` (both SQL
        expressions), comparing characters exactly."""
        raise NotImplementedError

    def regexp(self, expr, pattern):
        """(SQL, args): true when the checked search pattern `pattern`
        matches the text `expr` anywhere, ignoring case, within the time
        budget of regexp.regexp_budget."""
        raise NotImplementedError

    # How a search gives the candidates of substring conditions
    # (bugs/search_sql.py): "query", queries of their ids (column `id`),
    # tested with one IN over their UNION ALL (SQLite looks the bugs up by
    # id); or "condition", conditions over bug alias b, joined by OR and AND
    # (PostgreSQL estimates how many bugs each selects and picks its plan,
    # bitmaps of its indexes or the bugs in id order until the LIMIT).
    candidates_form = None

    def text_candidates(self, column, needle):
        """(SQL, args), in the form of candidates_form, of the bugs whose
        `column` (one of TEXT_INDEXED; for "alias", one of whose aliases;
        for "comment", one of whose comments, private ones too) may contain
        the text `needle` ignoring case,
        found through the engine's trigram index (schema.sql's bug text
        index): every bug for which `contains(lower(column), lower(needle))`
        holds is among them, and a few others may be, so the exact comparison
        is still made. None when the index cannot serve `needle` (fewer
        characters than a trigram has): the caller compares every bug."""
        raise NotImplementedError

    def among_ids(self, column, query):
        """SQL true when `column` is among the ids `query` gives, a condition
        an OR of such conditions can find through indexes."""
        raise NotImplementedError

    def has_text_index(self, conn):
        """True when the database has the bug text index."""
        raise NotImplementedError

    def fill_text_index(self, conn):
        """Index the bugs already stored, right after the bug text index was
        made (a migration)."""
        raise NotImplementedError

    def has_comment_text_index(self, conn):
        """True when the database has the comment text index."""
        raise NotImplementedError

    def fill_comment_text_index(self, conn):
        """Index the comments already stored, right after the comment text
        index was made (a migration)."""
        raise NotImplementedError

    def blob_text(self, expr):
        """The bytes `expr` as text that `contains` and lower() can search
        (attachment contents)."""
        raise NotImplementedError

    def as_text(self, expr):
        """The value `expr` as text (a number as its decimal digits)."""
        raise NotImplementedError

    def whole_number(self, text):
        """The whole number the text `text` starts with (0 when none), as
        SQLite's CAST(text AS INTEGER) reads it."""
        raise NotImplementedError

    # JSON lists ------------------------------------------------------------------

    def json_list(self, values, source, order):
        """A scalar subquery: the JSON array (as text; '[]' when there are
        no rows) of the rows of `source` ("FROM ... WHERE ..."), in the order
        `order` (an ORDER BY list), each the value of `values[0]` or, with
        several expressions, the array of their values."""
        raise NotImplementedError

    def numbers_in(self, text, alias):
        """A FROM item `alias` with one column `value`: the whole numbers
        listed in the text `text` (an SQL expression; numbers joined by
        commas and spaces, as bug id fields' history is)."""
        raise NotImplementedError

    # Queues (store/outbox.py) ---------------------------------------------------

    def skip_locked(self, alias):
        """The clause ending a SELECT that takes the rows it reads (of the
        table named `alias` in its FROM) for the current transaction,
        passing over rows another transaction holds: several workers
        claiming queue rows at once each get their own without waiting. ''
        where one writer at a time holds the whole database."""
        raise NotImplementedError

    # Dates -----------------------------------------------------------------------

    def whole_days_between(self, later, earlier):
        """SQL for the whole days (rounded toward zero) from the stored time
        `earlier` to `later` (both 'YYYY-MM-DD HH:MM:SS' text expressions)."""
        raise NotImplementedError

    # Schema ----------------------------------------------------------------------

    def script_statements(self, script):
        """The statements of `script` (schema.sql's SQL) as this engine runs them."""
        raise NotImplementedError

    def install_schema(self, conn, script):
        """Create the schema of `script` (schema.sql) in an empty database."""
        raise NotImplementedError

    def schema_version(self, conn):
        """The stored schema version (0 for an empty database)."""
        raise NotImplementedError

    def set_schema_version(self, conn, version):
        raise NotImplementedError

    def has_tables(self, conn):
        """True when the database holds any table."""
        raise NotImplementedError

    def table_exists(self, conn, table):
        raise NotImplementedError

    def column_exists(self, conn, table, column):
        raise NotImplementedError

    def index_names(self, conn, table):
        """The names of the indexes of `table` that DROP INDEX can drop."""
        raise NotImplementedError

    def tables(self, conn):
        """The names of the database's own tables (not the engine's, nor
        full-text indexes' shadow tables)."""
        raise NotImplementedError

    def columns(self, conn, table):
        """The column names of `table`, in order."""
        raise NotImplementedError

    # Copying whole tables (convert.py) ---------------------------------------------

    def stream(self, conn, sql, batch):
        """The rows of query `sql`, in lists of at most `batch`, without
        holding them all in memory."""
        raise NotImplementedError

    def bulk_insert(self, conn, table, columns, rows):
        """Insert `rows` (tuples in the order of `columns`) into `table`."""
        raise NotImplementedError

    def reset_ids(self, conn, tables):
        """Make the next id of each of `tables` follow its highest one."""
        raise NotImplementedError
