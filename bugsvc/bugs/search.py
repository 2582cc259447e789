"""Bug search: the request's parameters become one tree
of criteria, compiled into ONE SQL query joined with the caller's visibility
condition, so hidden bugs are never returned or counted, and no criterion is
ever evaluated on them (search_sql.Compiler.where).

The parameter forms, in the order the reference reads them: simple
field=value parameters, email*, chfield*, deadlinefrom/to, legacy boolean
charts (field0-0-0 ...), custom search (f1/o1/v1/n1/j1, OP/CP, j_top) and
quicksearch; all of them are ANDed.
"""

import re
from contextlib import nullcontext
from dataclasses import dataclass

from ..call.params import Params, as_bool
from ..catalogue import bug_fields
from ..errors import (
    BUGLIST_PARAMETERS_REQUIRED,
    OBJECT_NOT_SPECIFIED,
    PARAM_MUST_BE_NUMERIC,
    USER_ERROR,
    ServiceError,
)
from ..store import cache
from ..store.dialect import WorkBudgetExceeded
from ..store.regexp import RegexpInvalid, RegexpTooSlow, StatementTooSlow, regexp_budget
from . import answer_cache, object_cache, quicksearch
from .search_sql import FIELDS, Clause, Compiler, Condition


_DEFAULT_OPERATOR = {"short_desc": "allwordssubstr", "longdesc": "anywordssubstr",
                     "status_whiteboard": "allwordssubstr", "bug_file_loc": "allwordssubstr",
                     "keywords": "allwords", "assigned_to": "anywordssubstr",
                     "reporter": "anywordssubstr", "qa_contact": "anywordssubstr",
                     "cc": "anywordssubstr", "content": "matches"}
_ROLES = ("assigned_to", "reporter", "qa_contact", "longdesc", "cc")
_EMAIL_ROLES = ("assigned_to", "reporter", "cc", "qa_contact")

# The budget of one search's criteria, checked before anything is compiled:
# conditions and groups in all (a search of Bugzilla's forms has a few dozen
# at most), and groups inside groups (OP ... CP) of the custom search.
MAX_TERMS = 200
MAX_DEPTH = 20
# A search in bug id order up to this many bugs (limit + offset) stops at
# its first ones: the engine reads bugs in id order until it has them
# (search_sql.COMMON_MATCHES), within FIRST_ONLY_STEPS of the engine's work
# (about 100 ms on SQLite; then the text index's candidates are taken).
FIRST_ONLY = 1000
FIRST_ONLY_STEPS = 1_000_000

_CUSTOM_F = re.compile(r"^f(\d+)$")
_EMAIL_KEY = re.compile(r"email(\d+)")
_CHART = re.compile(r"^field(-?\d+)-(\d+)-(\d+)$")

# Select fields sorted by their values' sort keys, then the values: field
# -> the bug's column (_select_sort).
_SORTED_BY_KEY = {"bug_status": "status", "resolution": "resolution", "priority": "priority",
                  "bug_severity": "severity", "rep_platform": "platform", "op_sys": "op_sys"}
# Sort columns: internal name -> SQL over bug alias b (a fixed whitelist).
_ORDER = {
    "bug_id": "b.id",
    "short_desc": "lower(b.summary)",
    "product": "(SELECT lower(p.name) FROM products p WHERE p.id = b.product_id)",
    "component": "(SELECT lower(co.name) FROM components co WHERE co.id = b.component_id)",
    "classification": "(SELECT lower(cl.name) FROM products p JOIN classifications cl"
                      " ON cl.id = p.classification_id WHERE p.id = b.product_id)",
    "version": "lower(b.version)",
    "target_milestone": "(SELECT m.sort_key FROM milestones m WHERE m.product_id = b.product_id"
                        " AND m.name = b.target_milestone), lower(b.target_milestone)",
    "assigned_to": "(SELECT lower(u.login) FROM users u WHERE u.id = b.assigned_to)",
    "reporter": "(SELECT lower(u.login) FROM users u WHERE u.id = b.reporter)",
    "qa_contact": "(SELECT lower(u.login) FROM users u WHERE u.id = b.qa_contact)",
    "assigned_to_realname": "(SELECT lower(u.real_name) FROM users u WHERE u.id = b.assigned_to)",
    "reporter_realname": "(SELECT lower(u.real_name) FROM users u WHERE u.id = b.reporter)",
    "qa_contact_realname": "(SELECT lower(u.real_name) FROM users u WHERE u.id = b.qa_contact)",
    "creation_ts": "b.creation_time",
    "delta_ts": "b.last_change_time",
    "bug_file_loc": "lower(b.url)",
    "status_whiteboard": "lower(b.whiteboard)",
    "everconfirmed": "b.is_confirmed",
    "reporter_accessible": "b.is_creator_accessible",
    "cclist_accessible": "b.is_cc_accessible",
    "alias": "(SELECT MIN(lower(ba.alias)) FROM bug_aliases ba WHERE ba.bug_id = b.id)",
    "keywords": "(SELECT MIN(lower(k.name)) FROM bug_keywords bk JOIN keywords k"
                " ON k.id = bk.keyword_id WHERE bk.bug_id = b.id)",
    "estimated_time": "b.estimated_time",
    "remaining_time": "b.remaining_time",
    "deadline": "b.deadline",
    "work_time": "(SELECT SUM(wc.work_time) FROM comments wc WHERE wc.bug_id = b.id)",
}
_TIMETRACKING = frozenset(field.name for field in bug_fields.STANDARD if field.timetracking)


@dataclass
class Query:
    """A parsed search: criteria, order (SQL), limit and offset."""
    criteria: Clause
    order: str
    limit: int | None
    offset: int


def find(ctx, params, count_only=False):
    """Ids of the bugs the search `params` selects (in order), or their
    number when `count_only`.

    Errors: 50 offset without limit; 52 non-numeric limit/offset; 108
    unknown field; 32000 bad operator, regexp or quicksearch, or regular
    expressions that take too long to match; 56 bad date; 1000 no criteria
    (search_allow_no_criteria off) or empty quicksearch.
    """
    statement, again = _statement(ctx, params, count_only)
    rows = _rows(ctx, statement, count_only)
    if rows is None:
        rows = _rows(ctx, again(), count_only)
    if count_only:
        return rows[0][0]
    return [row[0] for row in rows]


def find_counted(ctx, params):
    """(the ids `find` gives, how many bugs the search selects past its
    limit and offset): a bug list's page and its number. A search that
    reads every match anyway (in another order than the bugs' ids, or
    past their first ones) and tests more than plain comparisons on each
    gives both in one statement, which tests each bug once; one that stops
    at its first bugs in id order, or whose bugs an index counts, is
    counted apart. Errors: as `find`."""
    statement, again = _statement(ctx, params, False)
    counted = (not statement.first_only and not statement.plain_only
               and statement.limit is not None)
    rows = _rows(ctx, statement, False, counted=counted)
    if rows is None:
        rows = _rows(ctx, again(), False)
    ids = [row[0] for row in rows]
    if statement.limit is None:
        return ids, len(ids)
    if counted and (rows or statement.offset == 0):
        return ids, rows[0][1] if rows else 0
    return ids, find(ctx, params, count_only=True)


@dataclass(frozen=True)
class _Statement:
    """A search compiled: its WHERE over bug alias b with its arguments,
    order (SQL), limit and offset; budgeted: it compares bugs in id order
    for a common text (Compiler.common_left_out), within FIRST_ONLY_STEPS;
    first_only: it stops at its first bugs in id order (Compiler.first_only);
    plain_only: its criteria are plain comparisons (Compiler.plain_only)."""
    where: str
    args: tuple
    order: str
    limit: int | None
    offset: int
    budgeted: bool
    first_only: bool = False
    plain_only: bool = False


# What a search's statement may be kept by: the parameters of a kept answer
# (answer_cache.KEPT_PARAMS), the operators of its fields, and count_only.
# Their statement depends on the caller and the catalogue alone, unless it
# holds for the moment of the call only (a relative date; rows read now).
STATEMENT_PARAMS = answer_cache.KEPT_PARAMS | {"count_only"} | frozenset(
    f"{name}_type" for name in answer_cache.KEPT_PARAMS - {"limit", "offset"})
# Statements kept at one catalog generation, at most (then made afresh).
MAX_STATEMENTS_KEPT = 1024


def _statement(ctx, params, count_only):
    """(the _Statement of the search `params`, a function giving it again
    for a search that went over its budget in id order: made without
    stopping at the first bugs). A search of STATEMENT_PARAMS alone is
    kept, by caller, at the catalog generation (with the catalogue's
    copies), unless its statement holds for the moment of the call only
    (Compiler.only_for_now) or is budgeted; the same
    search asked again at that generation is not parsed and compiled again.
    Errors: as find's."""
    items = answer_cache.plain_params(params or {}, STATEMENT_PARAMS)
    if items is None or ctx.catalog_generation is None or not object_cache.hashable(ctx.caller):
        statement, again, _ = _compiled(ctx, params, count_only)
        return statement, again
    kept = ctx.cached("search statements", cache.new_table)
    key = (ctx.caller, count_only, items)
    statement = kept.get(key)
    if statement is not None:
        return statement, None
    statement, again, only_for_now = _compiled(ctx, params, count_only)
    if not (only_for_now or statement.budgeted):
        cache.keep_at_most(kept, key, statement, MAX_STATEMENTS_KEPT)
    return statement, again


def _compiled(ctx, params, count_only):
    """_statement's answer, parsed and compiled now, and whether it holds
    for this moment only (Compiler.only_for_now)."""
    compiler = Compiler(ctx)
    query = parse(ctx, compiler, params)
    compiler.scans = count_only or query.limit is None
    compiler.first_only = (not count_only and query.limit is not None
                           and query.limit + query.offset <= FIRST_ONLY
                           and query.order.split(",")[0].split()[0] == "b.id")

    def made():
        where, args = _where(ctx, compiler, query)
        return _Statement(where, tuple(args), query.order, query.limit, query.offset,
                          compiler.common_left_out, compiler.first_only, compiler.plain_only)

    def again():
        compiler.first_only = False
        return made()
    statement = made()
    return statement, again, compiler.only_for_now


def _rows(ctx, statement, count_only, counted=False):
    """The rows of the search `statement`; None when it compared bugs in id
    order for a common text (budgeted) and went over FIRST_ONLY_STEPS
    before it had its first bugs. counted: each row has, after the bug's
    id, how many bugs the statement selects past its limit and offset."""
    args = list(statement.args)
    carried = None
    if count_only:
        sql = f"SELECT COUNT(*) FROM bugs b WHERE {statement.where}"
    else:
        # Generations the call assumed (where reading them is a round
        # trip) come with the bugs found, and the bug generation with them.
        carried = ctx.generations.carried_with_bug() if ctx.generations is not None else None
        columns = "b.id, COUNT(*) OVER ()" if counted else "b.id"
        if carried is not None:
            columns += f", {carried}"
        sql = f"SELECT {columns} FROM bugs b WHERE {statement.where} ORDER BY {statement.order}"
        if statement.limit is not None:
            sql += " LIMIT ? OFFSET ?"
            args += [statement.limit, statement.offset]
    # A statement that carries all three generations may run ahead of the
    # transaction (where its BEGIN, and so its COMMIT, is a round trip):
    # the transaction, if anything else is read, first checks that they
    # still stand (Generations.confirm_ahead).
    ahead = carried is not None and ctx.conn.dialect.keeps_bug_generation
    if not statement.budgeted:
        rows, ran_ahead = _run(ctx, sql, args, ahead)
    else:
        try:
            with ctx.conn.dialect.bounded_work(ctx.conn, FIRST_ONLY_STEPS):
                rows, ran_ahead = _run(ctx, sql, args)
        except WorkBudgetExceeded:
            return None
    if carried is not None and rows:
        generations = rows[0][2 if counted else 1:]
        if ran_ahead:
            ctx.generations.confirm_ahead(*generations)
        else:
            ctx.generations.confirm(*generations)
    return rows


def visible_where(ctx, params):
    """(SQL, args) of the WHERE over bug alias b that selects the bugs the
    search `params` finds among those the caller may see (what reports
    and charts count). Errors: as `find`."""
    compiler = Compiler(ctx)
    return _where(ctx, compiler, parse(ctx, compiler, params))


def _where(ctx, compiler, query):
    # A criterion is a condition that was compiled: parameters that name no
    # search field, empty values, limit, offset, order, count_only and the
    # field lists are none (as the reference: it refuses a search whose
    # conditions come out empty).
    where, args, criteria = compiler.where(query.criteria)
    if not criteria and not ctx.param_is_on("search_allow_no_criteria"):
        raise ServiceError(BUGLIST_PARAMETERS_REQUIRED, "You may not search, or create saved "
                                                        "searches, without any search terms.")
    return where, args


def run(ctx, sql, args):
    """The rows of search statement `sql`, within the budget of regular
    expressions and statements. Errors: 32000 a regular expression or a
    statement that takes too long, or an invalid regular expression."""
    return _run(ctx, sql, args)[0]


def _run(ctx, sql, args, ahead=False):
    """run's rows, and whether the statement ran ahead of the transaction
    (Connection.execute_ahead, on a snapshot of its own), which it may
    when `ahead`. Errors: run's."""
    # Generations the call assumed are checked with its next statement
    # (the revisions of the bugs found: bugs/object_cache.py) or its end.
    later = ctx.generations.checked_later() if ctx.generations is not None else nullcontext()
    try:
        with regexp_budget(), later:
            cursor = ctx.conn.execute_ahead(sql, args) if ahead else None
            if cursor is not None:
                return cursor.fetchall(), True
            return ctx.conn.execute(sql, args).fetchall(), False
    except RegexpTooSlow as slow:
        raise ServiceError(USER_ERROR, f"The regular expression '{slow.pattern}' takes too "
                                       "long to match; make it simpler.") from None
    except StatementTooSlow:
        raise ServiceError(USER_ERROR, "The search takes too long to answer; make it simpler "
                                       "(fewer words or criteria).") from None
    except RegexpInvalid as invalid:
        raise ServiceError(USER_ERROR, f"The regular expression '{invalid.pattern}' is not "
                                       "valid or too complex.") from None


def parse(ctx, compiler, params):
    """The Query of a search request (see `find` for the errors)."""
    raw = {key: value for key, value in (params or {}).items() if value is not None}
    if "offset" in raw and "limit" not in raw:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The 'offset' parameter needs 'limit' too.")
    limit, offset = _limit_and_offset(ctx, Params(raw))
    criteria = Clause()
    order_text = raw.get("order")
    if "quicksearch" in raw:
        found = quicksearch.parse(ctx, _single(raw["quicksearch"]))
        for key in ("status", "bug_status", "resolution", "bug_status_type", "resolution_type"):
            raw.pop(key, None)
        if found.statuses is not None:
            raw["bug_status"] = found.statuses
        if found.resolutions:
            raw["resolution"] = found.resolutions
        if found.order:
            order_text = found.order
        criteria.add(found.criteria)
    # The custom search is where a search grows largest: built (and refused
    # past the budget) before anything else is made of the parameters.
    custom = _custom_search(raw)
    simple = _simple_params(raw)
    for field_name, value in (("delta_ts", simple.pop("delta_ts", None)),
                              ("creation_ts", simple.pop("creation_ts", None))):
        if value is not None:
            criteria.add(Condition(field_name, "greaterthaneq", _single(value)))
    for role in _ROLES:
        if role in simple:
            value = simple.pop(role)
            operator = _single(raw.get(f"{role}_type") or _type_by_api_name(raw, role))
            if operator is None and isinstance(value, list):
                value = " ".join(str(v) for v in value)
            criteria.add(Condition(role, operator or "anywordssubstr", value))
    criteria.add(_basic_fields(compiler, simple, raw))
    criteria.add(_email(raw))
    criteria.add(_chfield(raw))
    if compiler.timetracker:
        criteria.add(_deadline(raw))
    criteria.add(_boolean_charts(raw))
    criteria.add(custom)
    _check_budget(criteria)
    return Query(criteria, _order(compiler, order_text), limit, offset)


def _check_budget(criteria):
    """Errors: 32000 when the criteria hold more than MAX_TERMS terms:
    conditions, and groups joining two or more (their SQL and its planning
    grow faster than they do)."""
    terms, stack = 0, [criteria]
    while stack:
        node = stack.pop()
        if isinstance(node, Clause):
            stack.extend(node.children)
            if len(node.children) < 2:
                continue
        terms += 1
        if terms > MAX_TERMS:
            raise _too_many_terms()


def _too_many_terms():
    return ServiceError(USER_ERROR, f"The search has more than {MAX_TERMS} terms (conditions "
                                    "and groups); split it into smaller searches.")


def _single(value):
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _limit_and_offset(ctx, p):
    maximum = int(ctx.param("max_search_results") or 0) or None
    limit = p.int("limit")
    offset = p.int("offset", 0)
    if (limit is not None and limit < 0) or offset < 0:
        raise ServiceError(PARAM_MUST_BE_NUMERIC, "'limit' and 'offset' must be positive numbers.")
    if limit == 0:
        return maximum, 0
    if limit is None or (maximum is not None and limit > maximum):
        limit = maximum
    return limit, offset if limit is not None else 0


def _simple_params(raw):
    """The parameters with bug-object names translated to internal ones."""
    simple = {}
    for key, value in raw.items():
        name = bug_fields.PARAM_NAMES.get(key, key)
        simple[name] = value
    return simple


def _basic_fields(compiler, simple, raw):
    """Conditions of the simple field=value parameters (`<field>_type` picks
    the operator; dotted field names may use '_' for '.')."""
    clause = Clause()
    for name in _fields_given(compiler, simple):
        underscored = name.replace(".", "_")
        value = simple.get(name, simple.get(underscored))
        if value is None or name in ("delta_ts", "creation_ts") or name in _ROLES:
            continue
        values = [v for v in (value if isinstance(value, list) else [value]) if v is not None]
        operator = _single(raw.get(f"{underscored}_type") or raw.get(f"{name}_type")
                           or _type_by_api_name(raw, name))
        operator = operator or _DEFAULT_OPERATOR.get(name, "anyexact")
        if name == "bug_status" and operator == "anyexact":
            values = _expand_statuses(compiler, values)
            if values is None:
                continue
        clause.add(Condition(name, operator, values[0] if len(values) == 1 else values))
    return clause


def _fields_given(compiler, simple):
    """The names of the fields the caller may search that `simple` gives a
    value for (by name, or a dotted one with '_' for '.'), in the order of
    compiler.field_names(): a search names a few of the many fields."""
    wanted = set(simple)
    wanted.update(name for underscored, name in _DOTTED if underscored in simple)
    return [name for name in compiler.field_names() if name in wanted]


def _type_by_api_name(raw, name):
    for api_name in _API_NAMES.get(name, ()):
        if f"{api_name}_type" in raw:
            return raw[f"{api_name}_type"]
    return None


# (name with '_' for '.', name) of the dotted fields (custom fields' names
# have no dot: catalogue/field.py).
_DOTTED = tuple((name.replace(".", "_"), name) for name in FIELDS if "." in name)


def _api_names():
    """{internal field name: [its names in the API]} (bug_fields.PARAM_NAMES
    turned round, in its order)."""
    names = {}
    for api_name, internal in bug_fields.PARAM_NAMES.items():
        names.setdefault(internal, []).append(api_name)
    return names


_API_NAMES = _api_names()


def _expand_statuses(compiler, values):
    """Status values with __open__/__closed__/__all__ expanded; None when
    every status is wanted (no criterion)."""
    statuses = compiler.ctx.cached("search statuses", _read_statuses)
    wanted = []
    for value in (str(v).strip() for v in values):
        if value == "__open__":
            wanted += [name for name, is_open in statuses if is_open]
        elif value == "__closed__":
            wanted += [name for name, is_open in statuses if not is_open]
        elif value == "__all__":
            return None
        else:
            wanted.append(value)
    wanted = list(dict.fromkeys(wanted))
    if len(wanted) == len(statuses) and set(wanted) == {name for name, _ in statuses}:
        return None
    return wanted


def _read_statuses(conn):
    """[(status, is open)] of every status (kept for a catalog generation)."""
    return [tuple(row) for row in conn.execute(
        "SELECT fv.value, fv.is_open FROM field_values fv JOIN fields f ON f.id = fv.field_id"
        " WHERE f.name = 'bug_status'")]


def _email(raw):
    clause = Clause()
    numbered = ((match.group(1), match.group(0))
                for match in map(_EMAIL_KEY.fullmatch, raw) if match)
    for n, key in sorted(numbered, key=lambda pair: (int(pair[0]), pair[1])):
        value = _single(raw[key])
        if value is None or not str(value).strip():
            continue
        operator = _single(raw.get(f"emailtype{n}")) or "anyexact"
        operator = "equals" if operator == "exact" else operator
        either = Clause("OR")
        for role in _EMAIL_ROLES:
            if as_bool(raw.get(f"email{role}{n}", False)):
                either.add(Condition(role, operator, str(value).strip()))
        if as_bool(raw.get(f"emaillongdesc{n}", False)):
            either.add(Condition("commenter", operator, str(value).strip()))
        clause.add(either)
    return clause


def _chfield(raw):
    """chfield/chfieldfrom/chfieldto/chfieldvalue: each field changed (to
    the value) within the dates; several fields are alternatives."""
    date_from = str(_single(raw.get("chfieldfrom")) or "").strip().lower()
    date_to = str(_single(raw.get("chfieldto")) or "").strip().lower()
    date_from = "" if date_from == "now" else date_from
    date_to = "" if date_to == "now" else date_to
    value = str(_single(raw.get("chfieldvalue")) or "")
    fields = [("creation_ts" if f == "[Bug creation]" else f)
              for f in Params(raw).str_list("chfield") if f]
    clause = Clause()
    if not (date_from or date_to or value):
        return clause
    if date_from:
        clause.add(Condition("delta_ts", "greaterthaneq", date_from))
    if date_to and not fields and not value:
        clause.add(Condition("delta_ts", "lessthaneq", date_to))
    if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", date_to):
        date_to += " 23:59:59"
    either = Clause("OR")
    for name in fields:
        same_change = Clause("AND_G")
        if value:
            same_change.add(Condition(name, "changedto", value))
        if date_from:
            same_change.add(Condition(name, "changedafter", date_from))
        if date_to:
            same_change.add(Condition(name, "changedbefore", date_to))
        either.add(same_change)
    return clause.add(either)


def _deadline(raw):
    clause = Clause()
    for key, operator in (("deadlinefrom", "greaterthaneq"), ("deadlineto", "lessthaneq")):
        value = _single(raw.get(key))
        if value:
            clause.add(Condition("deadline", operator, value))
    return clause


def _boolean_charts(raw):
    """Legacy charts: same chart and row ORed, rows ANDed, charts ANDed."""
    charts = {}
    for key in raw:
        match = _CHART.match(key)
        if match:
            chart, row, column = (int(part) for part in match.groups())
            charts.setdefault(chart, {}).setdefault(row, []).append(column)
    clause = Clause()
    for chart in sorted(charts):
        rows = Clause(negate=as_bool(raw.get(f"negate{chart}", False)))
        for row in sorted(charts[chart]):
            either = Clause("OR")
            for column in sorted(charts[chart][row]):
                ident = f"{chart}-{row}-{column}"
                either.add(Condition(_single(raw.get(f"field{ident}")),
                                     _single(raw.get(f"type{ident}")), raw.get(f"value{ident}")))
            rows.add(either)
        clause.add(rows)
    return clause


def _custom_search(raw):
    """f<n>/o<n>/v<n>/n<n>, OP/CP groups with j<n>, top joiner j_top.

    Errors: 32000 for a group closed that was never opened, groups nested
    more than MAX_DEPTH deep, or more than MAX_TERMS conditions (the search
    as a whole would be refused for them; refused here, nothing more is
    built)."""
    ids = sorted(int(m.group(1)) for m in map(_CUSTOM_F.match, raw) if m)
    if not ids:
        return None
    top = Clause(_joiner(raw.get("j_top")))
    current, stack, conditions = top, [], 0
    for n in ids:
        name = _single(raw.get(f"f{n}"))
        negate = as_bool(raw.get(f"n{n}", False))
        if name == "OP":
            if len(stack) >= MAX_DEPTH:
                raise ServiceError(USER_ERROR, f"f{n} opens a group (OP) more than {MAX_DEPTH} "
                                               "groups deep; nest fewer groups.")
            group = Clause(_joiner(raw.get(f"j{n}")), negate=negate)
            current.add(group)
            stack.append(current)
            current = group
        elif name == "CP":
            if not stack:
                raise ServiceError(USER_ERROR, f"f{n} closes a group (CP) that was never "
                                               "opened (OP).")
            current = stack.pop()
        else:
            conditions += 1
            if conditions > MAX_TERMS:
                raise _too_many_terms()
            current.add(Condition(name, _single(raw.get(f"o{n}")), raw.get(f"v{n}"), negate))
    return top


def _joiner(value):
    value = str(_single(value) or "AND").strip().upper()
    return value if value in ("AND", "OR", "AND_G") else "AND"


def _order(compiler, text):
    """ORDER BY SQL for `order` ("col [ASC|DESC], ..."); unknown columns are
    dropped; the bug id always breaks ties."""
    items = text if isinstance(text, list) else [text] if text else []
    parts = []
    for item in items:
        for piece in str(item).split(","):
            words = piece.split()
            if not words:
                continue
            name = bug_fields.bugzilla_name(words[0])
            direction = "DESC" if len(words) > 1 and words[1].upper() == "DESC" else "ASC"
            sql = _order_sql(compiler, name)
            if sql is None:
                continue
            # Bugs without the value first (last when descending), as SQLite
            # sorts NULL, on every engine.
            nulls = "NULLS LAST" if direction == "DESC" else "NULLS FIRST"
            parts.extend(f"{column.strip()} {direction} {nulls}"
                         for column in _split_columns(sql))
    parts.append("b.id ASC")
    return ", ".join(parts)


def _order_sql(compiler, name):
    if name in _TIMETRACKING and not compiler.timetracker:
        return None
    if name in _SORTED_BY_KEY:
        return _select_sort(compiler.ctx, name, _SORTED_BY_KEY[name])
    if name in _ORDER:
        return _ORDER[name]
    if name in compiler.custom_fields():
        field_id = int(compiler.custom_fields()[name][0])
        return (f"(SELECT MIN(cv.value) FROM bug_custom_values cv WHERE cv.bug_id = b.id"
                f" AND cv.field_id = {field_id})")
    return None


def _select_sort(ctx, field, column):
    """ORDER BY SQL of select field `field` (the bug's `column`): its
    value's sort key, then the value. The keys are constants of the
    catalogue's copy (a statement is made anew when the catalogue
    changes), so no row is read for a bug's key; a value the field no
    longer has sorts first, as one without a key (NULL)."""
    whens = " ".join(f"WHEN {_literal(value)} THEN {key}" for value, key in
                     ctx.cached("search sort keys", _read_sort_keys).get(field, ())
                     if "\x00" not in value)
    if not whens:
        return f"b.{column}"
    return f"CASE b.{column} {whens} END, b.{column}"


def _read_sort_keys(conn):
    """{field name: [(value, sort key)]} of the select fields sorted by key."""
    keys = {}
    for name, value, key in conn.execute(
            "SELECT f.name, fv.value, fv.sort_key FROM field_values fv"
            " JOIN fields f ON f.id = fv.field_id"
            f" WHERE f.name IN ({', '.join('?' for _ in _SORTED_BY_KEY)})", list(_SORTED_BY_KEY)):
        keys.setdefault(name, []).append((value, int(key)))
    return keys


def _literal(text):
    """`text` (without NUL) as an SQL string constant: quotes doubled, the
    rest as it is on both engines."""
    return "'" + text.replace("'", "''") + "'"


def _split_columns(sql):
    """Top-level comma-separated parts of an order expression."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(sql):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(sql[start:index])
            start = index + 1
    parts.append(sql[start:])
    return parts
