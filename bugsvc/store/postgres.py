"""The PostgreSQL engine (the optional extra `bugsvc[postgres]`: psycopg 3
and psycopg_pool): many writers at once, from many processes on many hosts.

Connections come from a pool (psycopg_pool), one per transaction, so a
process's threads share a few connections and a broken one is replaced.
Reads run in `REPEATABLE READ` transactions (one snapshot for the whole
call, as SQLite's reads have; the few that write, as login writes its
token, may, as on SQLite); writes run `SERIALIZABLE`, so
concurrent calls behave as if run one after another, as they are on
SQLite: a write PostgreSQL cannot order with another one fails with a
serialization failure (or a deadlock, or a unique key taken meanwhile) and
the caller runs it again from the start (db.Attempts).

The same SQL as on SQLite runs here: `?` placeholders become psycopg's,
whole numbers are sent as bigint (beyond 64 bits: OverflowError, as
sqlite3 raises), booleans and numeric results come back as SQLite gives
them (0/1, int or float), rows are read by position and by column name
(case-insensitively, as sqlite3.Row). The schema is schema.sql translated
statement by statement (`translate_script`): BIGINT for INTEGER,
identity columns for `id INTEGER PRIMARY KEY`, text in the "C" collation
(byte order, and lower() of ASCII letters only, as SQLite), trigger
functions for SQLite's triggers, and statements marked for one engine.
"""

import functools
import hashlib
import re
import threading
from contextlib import contextmanager
from decimal import Decimal

from . import db
from .dialect import TEXT_INDEXED, TRIGRAM, Dialect

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.adapt import Dumper, Loader
    from psycopg.types.numeric import Int8Dumper
except ImportError:              # the extra is not installed: said when a URL is used
    psycopg = None

SCHEMA_VERSION_TABLE = "bugsvc_schema_version"
# Statements of schema.sql between these lines are SQLite's alone ...
SQLITE_ONLY = ("-- BEGIN sqlite only", "-- END sqlite only")
# ... and lines starting with this are PostgreSQL's (comments to SQLite).
POSTGRESQL_LINE = "--postgresql: "
# Transactions: see the module's docstring.
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ"
_BEGIN_WRITE = "BEGIN ISOLATION LEVEL SERIALIZABLE"
# Claiming and settling queue rows (the outbox): each statement sees what is
# committed when it starts, and an UPDATE rechecks its WHERE on the row's
# newest version, so two workers never take one row; SERIALIZABLE would
# make them fail against each other instead.
_BEGIN_QUEUE = "BEGIN ISOLATION LEVEL READ COMMITTED"
# A write is run again at least this many times, and for as long as SQLite
# would wait for its lock (db.BUSY_TIMEOUT_MS): under heavy contention a
# serializable transaction can be chosen as the one to cancel many times.
TRIES = 30
PATIENCE = db.BUSY_TIMEOUT_MS / 1000
# SQLSTATEs of a transaction that met a concurrent one: serialization
# failure, deadlock, and a unique key taken by a concurrent insert (which
# SERIALIZABLE reports as such when the transaction did not read that key).
_RETRYABLE = {"40001", "40P01", "23505"}
# The collation whose regular expressions fold case and know character
# classes beyond ASCII (PostgreSQL built with ICU), as the `regex` engine does.
_UNICODE_COLLATION = "und-x-icu"
_INT8 = (-2 ** 63, 2 ** 63 - 1)
# Letters and digits in a row that pg_trgm makes a trigram of.
_TRIGRAM_RUN = re.compile(r"[^\W_]{%d}" % TRIGRAM)
# The search patterns of the statements this thread is putting together (the
# time budget's error names the first of them).
_patterns = threading.local()


def require_driver():
    """Errors: db.SchemaError when psycopg is not installed."""
    if psycopg is None:
        raise db.SchemaError("PostgreSQL needs the optional packages psycopg and psycopg_pool: "
                             "pip install 'bugsvc[postgres]'")


# SQL text ----------------------------------------------------------------------------

def _scan(sql):
    """(kind, text) pieces of `sql`: "code", "string" ('...'), "name" ("..."),
    "comment" (-- to the end of the line)."""
    pieces, i, start, n = [], 0, 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            if i > start:
                pieces.append(("code", sql[start:i]))
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            pieces.append(("string" if c == "'" else "name", sql[i:j + 1]))
            i = start = j + 1
        elif c == "-" and sql.startswith("--", i):
            if i > start:
                pieces.append(("code", sql[start:i]))
            j = sql.find("\n", i)
            j = n if j < 0 else j
            pieces.append(("comment", sql[i:j]))
            i = start = j
        else:
            i += 1
    if start < n:
        pieces.append(("code", sql[start:]))
    return pieces


@functools.lru_cache(maxsize=8192)
def psycopg_sql(sql):
    """`sql` with `?` placeholders as psycopg takes it: `%s` for each `?`
    outside quotes, `%%` for each `%`; `lower(?)` folds the value in the "C"
    collation, as lower() of the columns does (a value's own collation is
    the database's, whose lower() folds letters beyond ASCII, which SQLite's
    never does)."""
    out = []
    for kind, text in _scan(sql):
        text = text.replace("%", "%%")
        if kind == "code":
            text = text.replace("lower(?)", 'lower(? COLLATE "C")').replace("?", "%s")
        out.append(text)
    return "".join(out)


def _without_comments(sql):
    return "".join(text for kind, text in _scan(sql) if kind != "comment").strip()


_COLUMN = re.compile(r"^(\s*)(\w+)(\s+)(INTEGER|TEXT|REAL|BLOB)\b(.*)$", re.S | re.I)
_TYPES = {"INTEGER": "BIGINT", "TEXT": 'TEXT COLLATE "C"', "REAL": "DOUBLE PRECISION",
          "BLOB": "BYTEA"}
_TRIGGER = re.compile(r"^CREATE TRIGGER (\w+) (AFTER|BEFORE) (INSERT|UPDATE|DELETE) ON (\w+)\s+"
                      r"(?:FOR EACH ROW\s+)?BEGIN\s+(.*?);?\s*END;?$", re.S | re.I)
_CREATE_TABLE = re.compile(r"^CREATE TABLE (\w+) \((.*)\)\s*;?$", re.S | re.I)
_ADD_COLUMN = re.compile(r"^(ALTER TABLE \w+ ADD COLUMN )(.*?);?$", re.S | re.I)


def _split_top(text):
    """`text` split at the commas outside parentheses and quotes."""
    parts, depth, current = [], 0, []
    for kind, piece in _scan(text):
        if kind != "code":
            current.append(piece)
            continue
        for c in piece:
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            if c == "," and depth == 0:
                parts.append("".join(current))
                current = []
            else:
                current.append(c)
    parts.append("".join(current))
    return parts


def _column(definition):
    """One column definition of schema.sql in PostgreSQL's types."""
    match = _COLUMN.match(definition)
    if match is None:
        return definition
    space, name, gap, kind, rest = match.groups()
    kind = kind.upper()
    if kind == "INTEGER" and re.match(r"\s*PRIMARY KEY\b", rest, re.I):
        if name.lower() == "id":
            return f"{space}{name}{gap}BIGINT GENERATED BY DEFAULT AS IDENTITY{rest}"
    rest = re.sub(r"(REFERENCES \w+ \(\w+\))", r"\1 DEFERRABLE INITIALLY IMMEDIATE", rest,
                  flags=re.I)
    return f"{space}{name}{gap}{_TYPES[kind]}{rest}"


def _trigger(match):
    """A SQLite trigger as a PostgreSQL trigger function and its trigger."""
    name, when, event, table, body = match.groups()
    function = "bugsvc_trigger_" + hashlib.sha1(body.encode()).hexdigest()[:12]
    return [f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$ BEGIN {body}; RETURN NULL; END $$",
            f"CREATE TRIGGER {name} {when} {event} ON {table} FOR EACH ROW"
            f" EXECUTE FUNCTION {function}()"]


def translate_statement(statement):
    """The PostgreSQL statements doing what the schema.sql statement does."""
    statement = _without_comments(statement)
    if not statement:
        return []
    match = _TRIGGER.match(statement)
    if match:
        return _trigger(match)
    match = _CREATE_TABLE.match(statement)
    if match:
        table, body = match.groups()
        columns = ",".join(_column(part) for part in _split_top(body))
        return [f"CREATE TABLE {table} ({columns})"]
    match = _ADD_COLUMN.match(statement)
    if match:
        return [match.group(1) + _column(match.group(2))]
    return [statement.rstrip(";")]


def translate_script(script):
    """The statements of `script` (schema.sql's SQL) for PostgreSQL: those
    marked SQLite's left out, those marked PostgreSQL's taken in, each
    translated (translate_statement)."""
    lines, skipping = [], False
    for line in script.splitlines(keepends=True):
        stripped = line.strip()
        if stripped == SQLITE_ONLY[0]:
            skipping = True
        elif stripped == SQLITE_ONLY[1]:
            skipping = False
        elif not skipping:
            if stripped.startswith(POSTGRESQL_LINE):
                line = stripped[len(POSTGRESQL_LINE):] + "\n"
            lines.append(line)
    statements = []
    for statement in db.split_script("".join(lines)):
        statements.extend(translate_statement(statement))
    return statements


# Values -----------------------------------------------------------------------------

if psycopg is not None:
    class _BigintDumper(Int8Dumper):
        """Every whole number as bigint, as SQLite's INTEGER (64 bits)."""

        def dump(self, obj):
            if not _INT8[0] <= obj <= _INT8[1]:
                raise OverflowError("Python int too large to convert to SQLite INTEGER")
            return super().dump(obj)

    class _BoolDumper(Dumper):
        """True and False as 1 and 0, as sqlite3 stores them."""
        oid = psycopg.postgres.types["int8"].oid

        def dump(self, obj):
            return b"1" if obj else b"0"

    class _BoolLoader(Loader):
        """A boolean result as 1 or 0, as SQLite answers comparisons."""

        def load(self, data):
            return 1 if bytes(data) == b"t" else 0

    class _NumericLoader(Loader):
        """numeric results (sums and averages of integers) as SQLite's:
        int when whole, else float."""

        def load(self, data):
            value = Decimal(bytes(data).decode())
            if value == value.to_integral_value():
                return int(value)
            return float(value)


class Row(tuple):
    """A result row read by position or by column name (case-insensitive),
    as sqlite3.Row."""
    __slots__ = ()
    _index = {}
    _names = ()

    def __getitem__(self, key):
        if key.__class__ is str:
            index = self._index.get(key)
            if index is None:
                index = self._index.get(key.lower())
                if index is None:
                    raise IndexError("No item with that key")
            return tuple.__getitem__(self, index)
        return tuple.__getitem__(self, key)

    def keys(self):
        return list(self._names)


@functools.lru_cache(maxsize=4096)
def _row_class(names):
    index = {}
    for position in range(len(names) - 1, -1, -1):    # the first of equal names wins
        index[names[position]] = position
        index[names[position].lower()] = position
    return type("Row", (Row,), {"__slots__": (), "_index": index, "_names": names})


def _row_factory(cursor):
    description = cursor.description
    if description is None:
        return tuple
    return _row_class(tuple(column.name for column in description))


def _configure(conn):
    adapters = conn.adapters
    adapters.register_dumper(int, _BigintDumper)
    adapters.register_dumper(bool, _BoolDumper)
    adapters.register_loader("bool", _BoolLoader)
    adapters.register_loader("numeric", _NumericLoader)
    conn.execute("SET TIME ZONE 'UTC'")
    # A transaction waiting for another's row lock gives up after the
    # busy timeout SQLite's writers wait, instead of hanging.
    conn.execute(f"SET lock_timeout = {int(db.BUSY_TIMEOUT_MS)}")


_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.I)
_RETURNING = re.compile(r"\bRETURNING\b", re.I)


@functools.lru_cache(maxsize=4096)
def _insert_table(sql):
    """The table an INSERT without RETURNING writes to, else None."""
    match = _INSERT.match(sql)
    return match.group(1).lower() if match and not _RETURNING.search(sql) else None


if psycopg is not None:
    class _Cursor(psycopg.Cursor):
        """psycopg's cursor with sqlite3's lastrowid: after an INSERT into a
        table with an id column, the new row's id; else None."""
        lastrowid = None


class PgConnection:
    """A psycopg connection running SQL written for SQLite's sqlite3: `?`
    placeholders, execute/executemany returning a cursor, rows by name, and
    `lastrowid` after an INSERT into a table with an id column (the new
    row's id, asked for with RETURNING id)."""

    _trace = None

    def __init__(self, raw, dialect):
        self.raw = raw
        self.dialect = dialect

    def set_trace_callback(self, callback):
        """Call `callback(sql)` with every statement run (None: stop), as sqlite3 does."""
        self._trace = callback

    def execute(self, sql, params=None):
        if self._trace is not None:
            self._trace(sql)
        cursor = self.raw.cursor()
        budget = db.current_regexp_budget()
        bounded = budget is not None and not getattr(budget, "bounded", False)
        if bounded:
            self.dialect.bound_regexps(self, budget)
        table = _insert_table(sql)
        with_id = table is not None and self.dialect.has_id_column(self, table)
        if with_id:
            sql += " RETURNING id"
        try:
            if params:
                cursor.execute(psycopg_sql(sql), params)
            else:
                cursor.execute(sql if "%" not in sql else psycopg_sql(sql))
        except pg_errors.NumericValueOutOfRange as exc:
            raise OverflowError(str(exc)) from None
        except psycopg.DataError as exc:
            if "NUL" in str(exc):
                raise db.TextRefused(str(exc)) from None
            raise
        if bounded:
            self.raw.execute("SELECT set_config('statement_timeout', '0', true)")
        if with_id:
            row = cursor.fetchone()
            cursor.lastrowid = row[0] if row is not None else None
        return cursor

    def executemany(self, sql, rows):
        if self._trace is not None:
            self._trace(sql)
        cursor = self.raw.cursor()
        try:
            cursor.executemany(psycopg_sql(sql), rows)
        except pg_errors.NumericValueOutOfRange as exc:
            raise OverflowError(str(exc)) from None
        except psycopg.DataError as exc:
            if "NUL" in str(exc):
                raise db.TextRefused(str(exc)) from None
            raise
        return cursor

    def close(self):
        self.raw.close()


class PostgresDialect(Dialect):
    name = "postgresql"
    insertion_order = "ctid"
    candidates_form = "condition"

    def __init__(self, unicode_regexps=True):
        self.unicode_regexps = unicode_regexps
        self._id_columns = {}

    def has_id_column(self, conn, table):
        """True when `table` has an id column (an INSERT into it gives lastrowid)."""
        known = self._id_columns.get(table)
        if known is None:
            known = self._id_columns[table] = conn.raw.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = %s AND column_name = 'id'", (table,)).fetchone() is not None
        return known

    def contains(self, haystack, needle):
        return f"strpos({haystack}, {needle}) > 0"

    def regexp(self, expr, pattern):
        _patterns.pending = getattr(_patterns, "pending", [])[-20:] + [pattern]
        operand = f'({expr} COLLATE "{_UNICODE_COLLATION}")' if self.unicode_regexps else expr
        return f"{operand} ~* ?", [are_pattern(pattern)]

    def bound_regexps(self, conn, budget):
        """Limit the time of the statement of `budget`'s block (a search):
        what SQLite's budget allows for matching every summary and comment
        once with a regular expression. PostgreSQL cancels a statement that
        goes over, whatever takes the time (SQLite refuses searches too
        large to plan in the first place)."""
        budget.bounded = True
        budget.patterns = getattr(_patterns, "pending", [])
        _patterns.pending = []
        rows = conn.raw.execute(
            "SELECT COALESCE(SUM(GREATEST(reltuples, 0)), 0) FROM pg_class"
            " WHERE relname IN ('bugs', 'comments') AND relnamespace ="
            " (SELECT oid FROM pg_namespace WHERE nspname = current_schema())").fetchone()[0]
        milliseconds = int(1000 * (budget.seconds + budget.per_value * float(rows))) + 1
        conn.raw.execute("SELECT set_config('statement_timeout', %s, true)",
                         (str(milliseconds),))

    def text_candidates(self, column, needle):
        # ILIKE on text in the "C" collation folds ASCII letters, as lower()
        # does, and pg_trgm's GIN index serves it. pg_trgm makes trigrams of
        # letters and digits only: a needle without a run of three of them
        # would read the whole index, slower than comparing every bug.
        if column not in TEXT_INDEXED or "\x00" in needle or not _TRIGRAM_RUN.search(needle):
            return None
        escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        if column == "alias":
            return (self.among_ids("b.id", "SELECT bug_id FROM bug_aliases WHERE alias ILIKE ?"),
                    [f"%{escaped}%"])
        return f"b.{column} ILIKE ?", [f"%{escaped}%"]

    def among_ids(self, column, query):
        # An array made once (an InitPlan): an index scan can use it inside
        # an OR, which `IN (query)` there cannot.
        return f"{column} = ANY (ARRAY({query}))"

    def has_text_index(self, conn):
        return "bugs_text_trgm_idx" in self.index_names(conn, "bugs")

    def fill_text_index(self, conn):
        pass                # CREATE INDEX indexed the bugs already stored

    def blob_text(self, expr):
        # Every byte a character, as SQLite reads a blob as text.
        return f"convert_from({expr}, 'LATIN1')"

    def as_text(self, expr):
        return f"CAST({expr} AS TEXT)"

    def whole_number(self, text):
        leading = r"'^\s*[+-]?[0-9]{1,18}'"
        return (f"(CASE WHEN {text} ~ {leading} THEN CAST(substring({text} FROM {leading})"
                " AS BIGINT) ELSE 0 END)")

    def json_list(self, values, source, order):
        item = values[0] if len(values) == 1 else f"json_build_array({', '.join(values)})"
        return f"(SELECT COALESCE(json_agg({item} ORDER BY {order})::text, '[]') {source})"

    def numbers_in(self, text, alias):
        return (f"(SELECT CAST(nv AS BIGINT) AS value FROM regexp_split_to_table({text},"
                f" '[^0-9]+') AS ns(nv) WHERE nv <> '' AND length(nv) <= 18) {alias}")

    def skip_locked(self, alias):
        return f" FOR UPDATE OF {alias} SKIP LOCKED"

    def whole_days_between(self, later, earlier):
        return (f"CAST(trunc(extract(epoch FROM CAST({later} AS timestamp)"
                f" - CAST({earlier} AS timestamp)) / 86400) AS BIGINT)")

    def stream(self, conn, sql, batch):
        with conn.raw.cursor(name="bugsvc_stream") as cursor:
            cursor.itersize = batch
            cursor.execute(sql)
            while True:
                rows = cursor.fetchmany(batch)
                if not rows:
                    return
                yield rows

    def bulk_insert(self, conn, table, columns, rows):
        with conn.raw.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def reset_ids(self, conn, tables):
        for table in tables:
            if self.has_id_column(conn, table):
                conn.execute(f"SELECT setval(pg_get_serial_sequence(?, 'id'),"
                             f" COALESCE(MAX(id), 0) + 1, false) FROM {table}", (table,))

    def script_statements(self, script):
        return translate_script(script)

    def install_schema(self, conn, script):
        conn.execute(f"CREATE TABLE {SCHEMA_VERSION_TABLE} (version BIGINT NOT NULL)")
        conn.execute(f"INSERT INTO {SCHEMA_VERSION_TABLE} (version) VALUES (0)")
        db.run_script(conn, script)

    def schema_version(self, conn):
        if not self.table_exists(conn, SCHEMA_VERSION_TABLE):
            return 0
        row = conn.execute(f"SELECT version FROM {SCHEMA_VERSION_TABLE}").fetchone()
        return 0 if row is None else row[0]

    def set_schema_version(self, conn, version):
        conn.execute(f"UPDATE {SCHEMA_VERSION_TABLE} SET version = ?", (int(version),))

    def has_tables(self, conn):
        return conn.execute("SELECT COUNT(*) FROM pg_tables"
                            " WHERE schemaname = current_schema()").fetchone()[0] > 0

    def table_exists(self, conn, table):
        return conn.execute("SELECT 1 FROM pg_tables WHERE schemaname = current_schema()"
                            " AND tablename = ?", (table,)).fetchone() is not None

    def column_exists(self, conn, table, column):
        return column in self.columns(conn, table)

    def index_names(self, conn, table):
        return [row[0] for row in conn.execute(
            "SELECT i.indexname FROM pg_indexes i WHERE i.schemaname = current_schema()"
            " AND i.tablename = ? AND NOT EXISTS (SELECT 1 FROM pg_constraint c"
            " WHERE c.conname = i.indexname) ORDER BY i.indexname", (table,))]

    def tables(self, conn):
        return [row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            " AND tablename <> ? ORDER BY tablename", (SCHEMA_VERSION_TABLE,))]

    def columns(self, conn, table):
        return [row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = ?"
            " ORDER BY ordinal_position", (table,))]


# Python's `regex` syntax that PostgreSQL's regular expressions spell otherwise.
_ARE_ESCAPES = {"b": r"\y", "B": r"\Y"}
_ARE_CLASSES = {"L": "alpha", "Lu": "upper", "Ll": "lower", "N": "digit", "Nd": "digit",
                "P": "punct", "Z": "space", "Zs": "space"}
_PROPERTY = re.compile(r"\\([pP])\{(\w+)\}")


@functools.lru_cache(maxsize=256)
def are_pattern(pattern):
    """A search pattern, written in the `regex` engine's syntax (as on
    SQLite), as PostgreSQL's regular expressions spell it: \\b and \\B word
    boundaries become \\y and \\Y, \\p{L}-style classes POSIX classes. What
    PostgreSQL has no spelling for is refused by it as not valid."""
    out, i, n, in_class = [], 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            property_match = _PROPERTY.match(pattern, i)
            if property_match and property_match.group(2) in _ARE_CLASSES:
                negated = property_match.group(1) == "P"
                posix = f"[:{_ARE_CLASSES[property_match.group(2)]}:]"
                if in_class:
                    out.append(posix)            # negation inside a class: left unsupported
                else:
                    out.append(f"[^{posix}]" if negated else f"[{posix}]")
                i = property_match.end()
                continue
            escaped = pattern[i + 1]
            out.append(_ARE_ESCAPES.get(escaped, c + escaped) if not in_class else c + escaped)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("]")
                i += 1
            continue
        if c == "[" and in_class and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end > 0:
                out.append(pattern[i:end + 2])
                i = end + 2
                continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


class PostgresDatabase:
    """A PostgreSQL database behind the service, at a `postgresql://` URL
    (libpq's: user, password, host, port, database name, and parameters such
    as `?sslmode=require`; the PG* environment variables fill in what the
    URL leaves out).

    pool_size: the most connections this process opens (one per request
    thread at work, plus a few).
    """

    engine = "PostgreSQL"

    def __init__(self, url, pool_size=10):
        require_driver()
        self.url = url
        self.location = url
        self.pool_size = max(2, int(pool_size))
        self.dialect = PostgresDialect()
        self._pool = None
        self._pool_lock = threading.Lock()
        self._local = threading.local()

    def __str__(self):
        return display_url(self.url)

    # Connections --------------------------------------------------------------------

    def connect(self):
        """A new connection of its own (not from the pool), in autocommit
        mode (we issue BEGIN). Errors: psycopg.OperationalError when the
        server cannot be reached or refuses us."""
        raw = psycopg.connect(self.url, autocommit=True, row_factory=_row_factory,
                              cursor_factory=_Cursor)
        _configure(raw)
        self._learn_dialect(raw)
        return PgConnection(raw, self.dialect)

    def _learn_dialect(self, raw):
        if getattr(self, "_dialect_known", False):
            return
        has_icu = raw.execute("SELECT 1 FROM pg_collation WHERE collname = %s",
                              (_UNICODE_COLLATION,)).fetchone() is not None
        self.dialect.unicode_regexps = has_icu
        self._dialect_known = True

    def pool(self):
        """This process's pool, opened on first use (so a forked worker opens its own)."""
        with self._pool_lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                def configure(raw):
                    _configure(raw)
                    self._learn_dialect(raw)
                self._pool = ConnectionPool(
                    self.url, min_size=1, max_size=self.pool_size, open=True,
                    kwargs={"autocommit": True, "row_factory": _row_factory,
                            "cursor_factory": _Cursor},
                    configure=configure, timeout=db.BUSY_TIMEOUT_MS / 1000, name="bugsvc")
            return self._pool

    def connection(self):
        """This thread's own connection (outside the pool), opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self.connect()
        return conn

    def close_connection(self):
        """Close this thread's own connection, if any."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def close(self):
        """Close this thread's own connection and the process's pool."""
        self.close_connection()
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def in_transaction(self):
        """True while this thread is inside a transaction of this database."""
        return getattr(self._local, "depth", 0) > 0

    # Transactions -------------------------------------------------------------------

    @contextmanager
    def transaction(self, write=False, queue=False):
        """Yield a connection inside one transaction (see the module's
        docstring for its isolation). Commits when the block ends normally;
        rolls back on any exception. queue: a transaction claiming or
        settling queue rows with conditional UPDATEs and skip_locked, in
        READ COMMITTED (see _BEGIN_QUEUE)."""
        begin = _BEGIN_QUEUE if queue else _BEGIN_WRITE if write else _BEGIN_READ
        pinned = getattr(self._local, "conn", None)
        if pinned is not None and not self.in_transaction():
            with self._transaction_on(pinned, begin) as conn:
                yield conn
            return
        with self.pool().connection() as raw:
            with self._transaction_on(PgConnection(raw, self.dialect), begin) as conn:
                yield conn

    @contextmanager
    def separate_transaction(self, write=False):
        """Yield another connection inside a transaction of its own, beside
        this thread's open one (see SqliteDatabase.separate_transaction): a
        connection of its own, not one of the pool, which threads holding
        theirs could all be waiting for. Closed afterwards."""
        conn = self.connect()
        try:
            with self._transaction_on(conn, _BEGIN_WRITE if write else _BEGIN_READ):
                yield conn
        finally:
            conn.close()

    def attempts(self, write=False, separate=False, queue=False):
        """Tries of one transaction (db.Attempts): run again when it met a
        concurrent one (only transactions that write can)."""
        if separate:
            return db.Attempts(lambda: self.separate_transaction(write), _retryable, TRIES,
                               PATIENCE)
        return db.Attempts(lambda: self.transaction(write, queue), _retryable, TRIES, PATIENCE)

    @staticmethod
    def statement_too_large(exc):
        """True when `exc` is PostgreSQL (or libpq) refusing a statement for its size."""
        if getattr(exc, "sqlstate", None) and exc.sqlstate.startswith("54"):
            return True
        return isinstance(exc, psycopg.Error) and "number of parameters" in str(exc)

    @contextmanager
    def _transaction_on(self, conn, begin):
        conn.raw.execute(begin)
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            try:
                yield conn
            except BaseException:
                if not conn.raw.closed:
                    conn.raw.execute("ROLLBACK")
                raise
            conn.raw.execute("COMMIT")
        finally:
            self._local.depth -= 1

    @contextmanager
    def bulk_transaction(self):
        """One write transaction for copying whole tables in (convert.py),
        holding the lock of installing processes; foreign keys are checked
        at its end, not row by row."""
        conn = self.connect()
        try:
            with self._transaction_on(conn, "BEGIN"):
                conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_INSTALL_LOCK,))
                conn.raw.execute("SET CONSTRAINTS ALL DEFERRED")
                yield conn
        finally:
            conn.close()

    # Schema -------------------------------------------------------------------------

    def version(self):
        """The schema version stored in the database (0 for an empty one)."""
        with self.transaction() as conn:
            return self.dialect.schema_version(conn)

    def initialize(self):
        """Create or migrate the schema, as SqliteDatabase.initialize does, in
        one transaction holding a lock that other bugsvc processes starting
        on the same database wait for. Returns True when it was empty.
        Errors: SchemaError for a database that cannot be reached, holds
        other tables, or has a newer schema than this code."""
        try:
            conn = self.connect()
        except psycopg.OperationalError as exc:
            raise db.SchemaError(f"cannot connect to the PostgreSQL database {self}: "
                                 f"{_first_line(exc)}") from None
        try:
            conn.raw.execute("BEGIN")
            conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_INSTALL_LOCK,))
            try:
                created = db.bring_up_to_date(conn, str(self))
            except pg_errors.InsufficientPrivilege as exc:
                conn.raw.execute("ROLLBACK")
                raise db.SchemaError(f"the PostgreSQL database {self} refuses to create the "
                                     f"schema: {_first_line(exc)}. Give the account the "
                                     "right to create tables (and the pg_trgm extension) "
                                     "there.") from None
            except BaseException:
                conn.raw.execute("ROLLBACK")
                raise
            conn.raw.execute("COMMIT")
        finally:
            conn.close()
        return created


# An advisory lock's key that bugsvc processes installing or migrating take.
_INSTALL_LOCK = 0x6275677376630001


def _retryable(exc):
    return getattr(exc, "sqlstate", None) in _RETRYABLE


def _first_line(exc):
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def display_url(url):
    """`url` with its password left out, for messages and logs."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)
