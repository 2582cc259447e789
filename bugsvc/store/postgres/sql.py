"""SQL text written for SQLite (`?` placeholders, schema.sql) as PostgreSQL
runs it: PostgreSQL's placeholders (native_placeholders) and the schema's statements
translated one by one (translate_script)."""

import functools
import hashlib
import re

from ..schema import split_script


# Statements of schema.sql between these lines are SQLite's alone ...
SQLITE_ONLY = ("-- BEGIN sqlite only", "-- END sqlite only")
# ... and lines starting with this are PostgreSQL's (comments to SQLite).
POSTGRESQL_LINE = "--postgresql: "


def _scan(sql: str) -> list[tuple[str, str]]:
    """(kind, text) pieces of `sql`: "code", "string" ('...'), "name" ("..."),
    "comment" (-- to the end of the line)."""
    pieces: list[tuple[str, str]] = []
    i, start, n = 0, 0, len(sql)
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
def native_placeholders(sql: str) -> str:
    """`sql` with `?` placeholders as PostgreSQL's own, which psycopg's raw
    cursor sends as they are: `$1`, `$2`, ... for the `?`s outside quotes
    and comments, in order. `lower(?)` folds the value in the "C"
    collation, as lower() of the columns does (a value's own collation is
    the database's, whose lower() folds letters beyond ASCII, which SQLite's
    never does)."""
    out = []
    number = 0
    for kind, text in _scan(sql):
        if kind == "code" and "?" in text:
            text = text.replace("lower(?)", 'lower(? COLLATE "C")')
            pieces = text.split("?")
            numbered = [pieces[0]]
            for piece in pieces[1:]:
                number += 1
                numbered.append(f"${number}{piece}")
            text = "".join(numbered)
        out.append(text)
    return "".join(out)


# An IN list of two or more placeholders alone: `x IN (?, ?)`, `x NOT IN (?, ?, ?)`.
_IN_LIST = re.compile(r"\b(NOT\s+)?IN\s*\(\s*\?(?:\s*,\s*\?)+\s*\)", re.I)


@functools.lru_cache(maxsize=8192)
def array_lists(sql: str) -> tuple[str, tuple[tuple[int, int], ...]] | None:
    """`sql` with each IN list of two or more placeholders alone as one
    placeholder for an array (`x IN (?, ?)` as `x = ANY(?)`, `x NOT IN (?,
    ?)` as `x <> ALL(?)`, which PostgreSQL defines alike, NULLs included),
    and where each list's values are among the statement's (first position,
    count); None when `sql` has no such list. One text whatever the lists'
    lengths, so PostgreSQL prepares and plans it once, not once per length.
    A list of one stays `x IN (?)`, which PostgreSQL plans as `x = ?`: the
    plan it keeps for an array assumes several values (a GET of one bug
    would then be planned anew each time, as cheaper than that plan)."""
    out: list[str] = []
    lists: list[tuple[int, int]] = []
    index = 0
    for kind, text in _scan(sql):
        if kind != "code":
            out.append(text)
            continue
        position = 0
        for match in _IN_LIST.finditer(text):
            before = text[position:match.start()]
            index += before.count("?")
            count = match.group(0).count("?")
            lists.append((index, count))
            index += count
            out.append(before)
            out.append("<> ALL(?)" if match.group(1) else "= ANY(?)")
            position = match.end()
        out.append(text[position:])
        index += text[position:].count("?")
    return ("".join(out), tuple(lists)) if lists else None


def _without_comments(sql: str) -> str:
    return "".join(text for kind, text in _scan(sql) if kind != "comment").strip()


_COLUMN = re.compile(r"^(\s*)(\w+)(\s+)(INTEGER|TEXT|REAL|BLOB)\b(.*)$", re.S | re.I)
_TYPES = {"INTEGER": "BIGINT", "TEXT": 'TEXT COLLATE "C"', "REAL": "DOUBLE PRECISION",
          "BLOB": "BYTEA"}
# A trigger's event may name the columns whose update fires it (UPDATE OF a,
# b); a trigger written for PostgreSQL alone may have several events (INSERT
# OR DELETE). Its WHEN condition, if any, stays as it is.
_EVENT = r"(?:INSERT|UPDATE(?: OF \w+(?:, \w+)*)?|DELETE)"
_TRIGGER = re.compile(rf"^CREATE TRIGGER (\w+) (AFTER|BEFORE) ({_EVENT}(?: OR {_EVENT})*)"
                      r" ON (\w+)\s+(?:FOR EACH ROW\s+)?(?:WHEN (.*?)\s+)?"
                      r"BEGIN\s+(.*?);?\s*END;?$", re.S | re.I)
_CREATE_TABLE = re.compile(r"^CREATE TABLE (\w+) \((.*)\)\s*;?$", re.S | re.I)
_ADD_COLUMN = re.compile(r"^(ALTER TABLE \w+ ADD COLUMN )(.*?);?$", re.S | re.I)


def _split_top(text: str) -> list[str]:
    """`text` split at the commas outside parentheses and quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
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


def _column(definition: str) -> str:
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


def _trigger(match: re.Match[str]) -> list[str]:
    """A SQLite trigger as a PostgreSQL trigger function and its trigger."""
    name, when, event, table, condition, body = match.groups()
    function = "bugsvc_trigger_" + hashlib.sha1(body.encode()).hexdigest()[:12]
    only_when = f" WHEN ({condition})" if condition else ""
    return [f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$ BEGIN {body}; RETURN NULL; END $$",
            f"CREATE TRIGGER {name} {when} {event} ON {table} FOR EACH ROW{only_when}"
            f" EXECUTE FUNCTION {function}()"]


def translate_statement(statement: str) -> list[str]:
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


def translate_script(script: str) -> list[str]:
    """The statements of `script` (schema.sql's SQL) for PostgreSQL: those
    marked SQLite's left out, those marked PostgreSQL's taken in, each
    translated (translate_statement)."""
    lines: list[str] = []
    skipping = False
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
    for statement in split_script("".join(lines)):
        statements.extend(translate_statement(statement))
    return statements
