"""Search criteria to SQL: the searchable fields, the
operators, and the tree of conditions they form.

Nothing from the request ever becomes SQL text: field names are looked up
in the list of bug fields (catalogue/bug_fields.py) and operators in the
fixed tables below, values travel as placeholders.
Conditions on a bug's own columns are plain comparisons; conditions on
fields with several values per bug (CC, keywords, comments, flags ...) are
EXISTS subqueries, whose negative operators mean "no value matches".
Private comments and attachments are searched only for insiders; related
bugs (depends on / blocks, Bug ID fields) only when the caller can see them;
history rows only as the bug's history shows them to the caller.

Nothing hidden from the caller is ever handed to a condition, whatever
order the planner picks: a condition's cost on a hidden bug, comment or
history row (a slow regular expression, say) would tell what it holds. So
each condition sits in a CASE behind the rule that hides such rows (`_guarded`).
"""

import re
import time
from dataclasses import dataclass, field
from re import _constants, _parser  # pattern structure, to refuse exponential regexps

from ..catalogue import bug_fields
from ..catalogue.bug_fields import DATE_KIND, NUMBER, SELECT
from ..catalogue.field_types import BUG_ID
from ..errors import INVALID_FIELD_NAME, USER_ERROR, ServiceError
from ..store.db import placeholders
from ..store.regexp import compile_regexp
from . import history as bug_history, search_dates, visibility


# Seconds one search may spend building its SQL (looking names up included),
# within the term budget of search.py; the statement has a budget of its own.
BUILD_SECONDS = 1.0
_clock = time.monotonic
_USERS = "SELECT id FROM users WHERE lower(login)"


@dataclass(frozen=True)
class FieldDef:
    """How one searchable field reads.

    kind: TEXT, NUMBER, DATE_KIND, USER or SELECT (SELECT: a legal value of
    field_values, compared exactly after case-folding in Python).
    expr: SQL of the value, over bug alias b, or over the source's row.
    source: key of SOURCES when a bug has any number of values.
    lookup: (id column, "SELECT id FROM t WHERE lower(name)") for fast exact
    matching through an index.
    user_id: SQL of the user's id (pronouns like %reporter%).
    history: the field name in bug_activity (changed* operators).
    timetracking: only members of the timetrackinggroup may search it.
    words_exact: word operators compare whole values (keywords).
    needs: what expr needs, in order: "now" and "caller" (a placeholder
    each), "history" (the history rows of alias oa the caller may see, in
    place of {history_oa}).
    """
    kind: str
    expr: str
    source: str | None = None
    lookup: tuple | None = None
    user_id: str | None = None
    history: str | None = None
    timetracking: bool = False
    words_exact: bool = False
    needs: tuple = ()


def _user(column, source=None, coalesce=False):
    login = f"(SELECT u.login FROM users u WHERE u.id = {column})"
    return dict(expr=f"COALESCE({login}, '')" if coalesce else login, source=source,
                lookup=(column, _USERS), user_id=column)


# The tables of the catalogue (moved with the catalog generation) whose ids
# a search looks up by name: from the process's copy of {folded name: ids}
# (Context.cached) instead of a statement per search.
_CATALOG_LOOKUPS = {}
# What SQL's lower() folds on both engines (SQLite without ICU, PostgreSQL
# in the "C" collation): ASCII letters only.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _by_name(table):
    """The lookup statement (without its IN list) of `table`'s ids by name,
    answered from the catalogue's copy (_CATALOG_LOOKUPS)."""
    select = f"SELECT id FROM {table} WHERE lower(name)"
    _CATALOG_LOOKUPS[select] = table
    return select


def _real_name(column):
    return dict(expr=f"COALESCE((SELECT u.real_name FROM users u WHERE u.id = {column}), '')")


# How search reads the fields that are not a column of the bugs table as it
# is (bug_fields.BugField.column): joined, computed, or with any number of
# values per bug. Their kinds, history names and who may search them are
# the registry's.
_READS = {
    "classification": dict(
        expr="(SELECT cl.name FROM products p JOIN classifications cl ON cl.id ="
             " p.classification_id WHERE p.id = b.product_id)",
        lookup=("b.product_id", "SELECT p.id FROM products p JOIN classifications cl"
                                " ON cl.id = p.classification_id WHERE lower(cl.name)")),
    "product": dict(expr="(SELECT p.name FROM products p WHERE p.id = b.product_id)",
                    lookup=("b.product_id", _by_name("products"))),
    "component": dict(expr="(SELECT co.name FROM components co WHERE co.id = b.component_id)",
                      lookup=("b.component_id", _by_name("components"))),
    "assigned_to": _user("b.assigned_to"),
    "reporter": _user("b.reporter"),
    "qa_contact": _user("b.qa_contact", coalesce=True),
    "assigned_to_realname": _real_name("b.assigned_to"),
    "reporter_realname": _real_name("b.reporter"),
    "qa_contact_realname": _real_name("b.qa_contact"),
    "deadline": dict(expr="(b.deadline || ' 00:00:00')"),
    "work_time": dict(expr="(SELECT COALESCE(SUM(wc.work_time), 0) FROM comments wc"
                           " WHERE wc.bug_id = b.id)"),
    "percentage_complete": dict(
        expr="(SELECT CASE WHEN SUM(pc.work_time) + b.remaining_time = 0 THEN 0 ELSE"
             " 100 * SUM(pc.work_time) / (SUM(pc.work_time) + b.remaining_time) END"
             " FROM comments pc WHERE pc.bug_id = b.id)"),
    "longdescs.count": dict(expr="(SELECT COUNT(*) FROM comments lc WHERE lc.bug_id = b.id"
                                 "{private_lc})"),
    # Day counts are spelled by the dialect ({days:...} is the later time's
    # placeholder and the earlier time's SQL).
    "days_elapsed": dict(expr="{days:b.last_change_time}", needs=("now",)),
    "owner_idle_time": dict(
        expr="{days:COALESCE((SELECT MAX(oa.changed_at) FROM bug_activity oa"
             " WHERE oa.bug_id = b.id AND oa.who = b.assigned_to AND {history_oa}),"
             " b.creation_time)}", needs=("now", "history")),
    "last_visit_ts": dict(expr="(SELECT lv.last_visit_ts FROM bug_user_last_visit lv"
                               " WHERE lv.bug_id = b.id AND lv.user_id = ?)", needs=("caller",)),
    "content": dict(expr="b.summary"),
    # Fields with any number of values per bug.
    "alias": dict(expr="ba.alias", source="alias"),
    "keywords": dict(expr="k.name", source="keywords", words_exact=True,
                     lookup=("bk.keyword_id", _by_name("keywords"))),
    "cc": _user("cc.user_id", source="cc"),
    "dependson": dict(expr="dep.depends_on", source="dependson"),
    "blocked": dict(expr="dep.blocked", source="blocked"),
    "see_also": dict(expr="sa.url", source="see_also"),
    "bug_group": dict(expr="g.name", source="groups"),
    "tag": dict(expr="pt.name", source="tags"),
    "longdesc": dict(expr="c.body", source="comments"),
    "longdescs.isprivate": dict(expr="c.is_private", source="comments"),
    "commenter": _user("c.author_id", source="comments"),
    "comment_tag": dict(expr="ct.tag", source="comment_tags"),
    "attachments.description": dict(expr="att.summary", source="attachments"),
    "attachments.filename": dict(expr="att.file_name", source="attachments"),
    "attachments.mimetype": dict(expr="att.content_type", source="attachments"),
    "attachments.ispatch": dict(expr="att.is_patch", source="attachments"),
    "attachments.isobsolete": dict(expr="att.is_obsolete", source="attachments"),
    "attachments.isprivate": dict(expr="att.is_private", source="attachments"),
    "attachments.submitter": _user("att.creator_id", source="attachments"),
    "attach_data.thedata": dict(expr="{blob:adt.data}", source="attach_data"),
    "flagtypes.name": dict(expr="(ft.name || fl.status)", source="flags"),
    "requestees.login_name": _user("fl.requestee_id", source="flags"),
    "setters.login_name": _user("fl.setter_id", source="flags"),
}


def _definition(field):
    read = _READS.get(field.name) or dict(expr=f"b.{field.column}")
    return FieldDef(field.search, history=field.history, timetracking=field.timetracking, **read)


# The standard fields by their Bugzilla names, in the registry's order.
FIELDS = {field.name: _definition(field) for field in bug_fields.STANDARD}

_NO_VALUE = ("isempty", "isnotempty")
_NEGATIVE = {"notequals": "equals", "notsubstring": "substring", "nowordssubstr": "anywordssubstr",
             "nowords": "anywords", "notregexp": "regexp", "isempty": "isnotempty",
             "notmatches": "matches"}
_POSITIVE = ("equals", "anyexact", "substring", "casesubstring", "anywordssubstr",
             "allwordssubstr", "anywords", "allwords", "regexp", "lessthan", "lessthaneq",
             "greaterthan", "greaterthaneq", "isnotempty", "matches")
_CHANGED = ("changedbefore", "changedafter", "changedfrom", "changedto", "changedby")
OPERATORS = frozenset(_POSITIVE) | frozenset(_NEGATIVE) | frozenset(_CHANGED) | {"substr"}
_COMPARE = {"lessthan": "<", "lessthaneq": "<=", "greaterthan": ">", "greaterthaneq": ">="}
_PRONOUNS = {"%reporter%": "b.reporter", "%assignee%": "b.assigned_to",
             "%qacontact%": "b.qa_contact"}
_WORDS = re.compile(r"[\s,]+")
_EXPR = "\x00"   # stands for the field's expression while a condition is built
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
# A comparison of a bug's own column with constants (or a constant false):
# it calls no function and costs the same on every bug, so it may be tested
# on bugs the caller cannot see, which lets the planner use an index for it.
_PLAIN = re.compile(r"b\.[a-z_]+ (?:IN \(\?(?:, \?)*\)|[<>]=? \?|= \?)|1 = 0")


# Substring conditions whose candidates a text index finds (the bug text
# index, the comment text index for a bug's comments): field -> column.
_TEXT_INDEXED = {"short_desc": "summary", "status_whiteboard": "whiteboard", "alias": "alias",
                 "longdesc": "comment"}
# Operators of several words (_words), each a substring of what meets them:
# operator -> True when every word must be there, False when any one.
_WORDS_CANDIDATES = {"allwordssubstr": True, "allwords": True, "anywordssubstr": False,
                     "anywords": False}
# Substring conditions whose candidates a catalogue's names find: field ->
# (query of the matching names' ids, with {match} for the comparison; the
# compared column; the bug ids having those names, as a query and as a
# condition over bug alias b, with {ids}). The names are looked up first, so
# the bugs' part says exactly which ids it wants (the planner knows how many
# bugs those are) or is left out.
_CATALOGUE_CANDIDATES = {
    "product": ("SELECT p.id FROM products p WHERE {match}", "p.name",
                "SELECT cb.id AS id FROM bugs cb WHERE cb.product_id IN ({ids})",
                "b.product_id IN ({ids})"),
    "component": ("SELECT co.id FROM components co WHERE {match}", "co.name",
                  "SELECT cb.id AS id FROM bugs cb WHERE cb.component_id IN ({ids})",
                  "b.component_id IN ({ids})"),
    "keywords": ("SELECT k.id FROM keywords k WHERE {match}", "k.name",
                 "SELECT bk.bug_id AS id FROM bug_keywords bk WHERE bk.keyword_id IN ({ids})",
                 None),
}
# Substring conditions on an account whose candidates the accounts whose
# login holds the text find (Compiler._user_ids, when few): field -> the bug
# ids having those accounts, as a query and as a condition over bug alias b,
# with {ids}. A list's bugs are a subquery in the condition (PostgreSQL
# makes it a hash, also beside an OR, where an array would be compared one
# id at a time).
_USER_CANDIDATES = {
    "assigned_to": ("SELECT ub.id AS id FROM bugs ub WHERE ub.assigned_to IN ({ids})",
                    "b.assigned_to IN ({ids})"),
    "reporter": ("SELECT ub.id AS id FROM bugs ub WHERE ub.reporter IN ({ids})",
                 "b.reporter IN ({ids})"),
    "qa_contact": ("SELECT ub.id AS id FROM bugs ub WHERE ub.qa_contact IN ({ids})",
                   "b.qa_contact IN ({ids})"),
    "cc": ("SELECT ucc.bug_id AS id FROM bug_cc ucc WHERE ucc.user_id IN ({ids})",
           "b.id IN (SELECT ucc.bug_id FROM bug_cc ucc WHERE ucc.user_id IN ({ids}))"),
    "commenter": ("SELECT uc.bug_id AS id FROM comments uc WHERE uc.author_id IN ({ids})",
                  "b.id IN (SELECT uc.bug_id FROM comments uc WHERE uc.author_id IN ({ids}))"),
}
# The candidates of a condition no bug can meet (a name no product has).
NOTHING = ("", [])
# A text that more rows of a text index than this may hold is a common
# one: a search that stops at its first bugs in id order (Compiler.first_only)
# finds them sooner by comparing bugs in that order than by first gathering
# every candidate the index gives (which grows with the data), unless
# few bugs meet all its criteria (two common words seldom together): the
# search then stops that comparison after a bounded amount of work and
# takes the index's candidates (bugs/search.py).
COMMON_MATCHES = 5000
# The most bug ids a search holds as an array of candidates (the dialect's
# among_ids, where its candidates are conditions). PostgreSQL compares such
# an array one id at a time with each bug a lossy index beside it in an OR
# brings: at 100,000 bugs, 5,000 aliases' bugs OR summaries holding "the"
# (21,000 bugs) took 0.8 s, 2,500 bugs of a keyword 0.55 s, 70 aliases'
# 0.07 s; leaving such a term without candidates (its bugs compared) 0.12 s.
# At this many, a term whose OR brings every bug costs about that comparison.
ARRAY_MATCHES = 300
# The most accounts whose login holds a text that a search tests by their
# ids (Compiler._user_ids): the bugs are then found through the user
# columns' indexes. Past that, each bug's account's login is compared.
USER_MATCHES = 1000


@dataclass
class _Candidates:
    """The candidates of a clause: those of its children (a query's (SQL,
    args) or _Candidates), all of them (OR) or those common to all (AND)."""
    joiner: str
    children: list


def _candidate_query(found):
    """(SQL, args) of one query giving the ids of the candidates `found`:
    those of an OR joined by UNION ALL (IN keeps each id once; a UNION would
    first sort them all), those of an AND by INTERSECT."""
    if not isinstance(found, _Candidates):
        return found
    parts = []
    for child in found.children:
        sql, args = _candidate_query(child)
        if isinstance(child, _Candidates):       # never UNION and INTERSECT unbracketed
            sql = f"SELECT id FROM ({sql}) AS candidates"
        parts.append((sql, args))
    joiner = " UNION ALL " if found.joiner == "OR" else " INTERSECT "
    return (joiner.join(sql for sql, _ in parts), [arg for _, args in parts for arg in args])


def _candidate_condition(found):
    """(SQL, args): bug b is among the candidates `found`, given as conditions."""
    if not isinstance(found, _Candidates):
        return found
    parts = [_candidate_condition(child) for child in found.children]
    return ("(" + f" {found.joiner} ".join(sql for sql, _ in parts) + ")",
            [arg for _, args in parts for arg in args])


# The criteria tree ------------------------------------------------------------------

@dataclass
class Condition:
    """One criterion: field, operator, value (string or list), negated or not."""
    field: str
    operator: str
    value: object
    negate: bool = False


@dataclass
class Clause:
    """Criteria joined by AND, OR or AND_G (conditions on the same value row)."""
    joiner: str = "AND"
    children: list = field(default_factory=list)
    negate: bool = False

    def add(self, child):
        if child is not None:
            self.children.append(child)
        return self


@dataclass
class _Rows:
    """The rows of a multi-valued source for bug alias b: `from_sql` (FROM ...
    WHERE <link to b>) and `guard`, the condition a row must meet to be seen
    by the caller (None: every row); `end` ends an EXISTS over them (the
    dialect's per_row_subquery_end, where the search stops at a limit)."""
    from_sql: str
    from_args: list
    guard: str | None = None
    guard_args: list = field(default_factory=list)
    end: str = ""


@dataclass
class _Exists:
    """A condition on one row of a multi-valued source (still to be wrapped)."""
    source: str
    rows: _Rows
    row_sql: str
    row_args: list
    negative: bool = False

    def sql(self):
        row, args = _guarded(self.rows.guard, self.rows.guard_args, self.row_sql, self.row_args)
        exists = f"EXISTS (SELECT 1 {self.rows.from_sql} AND {row}{self.rows.end})"
        return (f"NOT {exists}" if self.negative else exists), self.rows.from_args + args


def _guarded(guard, guard_args, sql, args):
    """(SQL, args) of condition `sql` evaluated only where `guard` holds.

    A CASE is the one form whose order of evaluation SQLite and PostgreSQL
    keep; in an AND the planner tests the terms as it likes (correlated
    subqueries, such as most visibility rules, last of all). `sql` is a
    CASE's WHEN too, not its THEN: SQLite stops an AND or an OR at its
    first term that decides it only where it tests a condition (a WHERE, a
    WHEN), and evaluates every term of one whose value it takes (a THEN):
    every comment of every bug, for a search of a word in a summary or a
    comment. A NULL condition is false either way (it never stands
    negated: callers negate with IS NOT TRUE or NOT EXISTS)."""
    if not guard:
        return sql, args
    return (f"(CASE WHEN {guard} THEN (CASE WHEN {sql} THEN TRUE ELSE FALSE END) ELSE FALSE END)",
            list(guard_args) + list(args))


# Compiling ------------------------------------------------------------------------------

class Compiler:
    """Turns a criteria tree into one SQL condition over bug alias b."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.dialect = ctx.conn.dialect
        self.insider = visibility.is_insider(ctx)
        self.timetracker = visibility.is_timetracker(ctx)
        self._custom = None
        self._legal = {}
        self._compiled = {}           # id(node) -> compiled, each node compiled once
        # True when the search stops at its first few bugs in id order (see
        # COMMON_MATCHES); set by the search before `where`. common_left_out:
        # `where` left a common text's candidates out for it.
        self.first_only = False
        self.common_left_out = False
        # False when the search stops at a limit (its bugs' visibility is
        # then looked up bug by bug); True for counts and reports, which go
        # over every bug the criteria select (bug_visibility_sql's scan).
        self.scans = True
        # True once the SQL made depends on the moment of the call: its time
        # (a relative date, "now") or rows read now (a text's first
        # matches: _first_matches). Such a statement is made anew each
        # time (search.py).
        self.only_for_now = False
        # True when `where` found only plain comparisons of a bug's own
        # columns with constants (_PLAIN), each cheap to test on a bug.
        self.plain_only = True
        self._text_matches_read = {}      # (column, text) -> first_text_matches'
        self._catalogue_ids_read = {}     # (field, text) -> _catalogue_ids'
        self._user_ids_read = {}          # (text, case) -> _user_ids'
        self._deadline = _clock() + BUILD_SECONDS

    @property
    def now(self):
        """The call's time, noted as read (only_for_now)."""
        self.only_for_now = True
        return self.ctx.now

    def where(self, criteria):
        """(SQL, args, has criteria) of a search's WHERE over bug alias b: the
        bugs the caller may see that meet `criteria` (a Clause); has criteria
        is False when no condition came out of it.

        The criteria are evaluated only on bugs the caller may see (they sit
        behind its visibility in a CASE); comparisons of a bug's own column
        with constants (`_PLAIN`) are also left outside, so the planner can
        find the bugs through an index on them, and so are the candidates
        of substring conditions (`candidates`): ids found through indexes,
        a superset of the bugs the criteria select, which the criteria and
        the visibility rule in the CASE then narrow exactly.
        """
        visible, visible_args = visibility.bug_visibility_sql(self.ctx, scan=self.scans)
        plain, guarded, narrowed, founds = [], [], [], []
        self.common_left_out = False
        for node, (sql, args) in self._and_terms(criteria):
            if _PLAIN.fullmatch(sql):
                plain.append((sql, args))
                continue
            guarded.append((sql, args))
            found = self.candidates(node)
            if found is NOTHING:
                narrowed.append(("1 = 0", []))
            elif isinstance(found, _Candidates) and found.joiner == "AND":
                founds += found.children        # each as a term of its own (_narrowest)
            elif found is not None:
                founds.append(found)
        narrowed += [self._in_candidates(found) for found in self._narrowest(founds)]
        plain += narrowed
        self.plain_only = not guarded
        rest = None
        if guarded:
            rest = (" AND ".join(sql for sql, _ in guarded),
                    [arg for _, args in guarded for arg in args])
        condition, args = _guarded(visible, visible_args, *rest) if rest else (visible,
                                                                               visible_args)
        where = " AND ".join([sql for sql, _ in plain] + [condition])
        return (where, [arg for _, plain_args in plain for arg in plain_args] + args,
                bool(plain or guarded))

    def _narrowest(self, founds):
        """The candidates worth taking of several ANDed terms (`founds`,
        each a term's, or a part of an AND's): all of them, unless some are
        few (COMMON_MATCHES) and others many, which are then left out.
        SQLite makes each term's candidates whole before it tests a bug (a
        rare word and a common one in comments: 500 ms at a million bugs,
        for a few bugs), and the few bugs' criteria are tested anyway.
        Counted now, COMMON_MATCHES + 1 rows at most each, where the search
        goes over all its candidates (not first_only: there a common text's
        candidates are left out already) in the dialect's "query" form."""
        if (len(founds) < 2 or self.first_only
                or self.dialect.candidates_form != "query"):
            return founds
        few = [found for found in founds
               if self._at_most(*_candidate_query(found), COMMON_MATCHES)]
        return few or founds

    def _and_terms(self, node):
        """(node, compiled term) of the terms whose AND is `node`: nested AND
        clauses are opened up, anything else is one term."""
        if isinstance(node, Clause) and node.joiner == "AND" and not node.negate:
            return [term for child in node.children for term in self._and_terms(child)]
        compiled = self.compile(node)
        return [] if compiled is None else [(node, compiled)]

    # Candidates ---------------------------------------------------------------------

    def candidates(self, node):
        """(SQL, args) of a query giving the ids of every bug that may meet
        `node` (a Condition or Clause), found through indexes without
        reading every bug: substring and word conditions on summaries,
        whiteboards and aliases through the bug text index, on comments
        through the comment text index, substring conditions on products,
        components and keywords through the catalogue's names, on accounts
        (assignee, reporter, QA contact, CC, commenter) through the few
        accounts whose login holds the text. A few more bugs may be among
        them (the criteria are still evaluated on each), hidden ones too (the
        visibility rule is still applied): no function is handed a hidden
        bug's text; only the index lookup reads the index, as any index
        lookup of a plain condition does. None when `node` has no such
        query (a negation, an OR with a term that has none, short texts):
        then every bug is compared, as without indexes.
        """
        if node.negate:
            return None
        self._check_time()
        if isinstance(node, Condition):
            return self._condition_candidates(node)
        found = []
        for child in node.children:
            if self.compile(child) is None:         # no criteria: not part of the clause
                continue
            child_found = self.candidates(child)
            if child_found is None:
                if node.joiner == "OR":
                    return None
                continue                            # an AND holds only on a child's bugs
            if child_found is NOTHING:
                if node.joiner != "OR":
                    return NOTHING
                continue
            found.append(child_found)
        if not found:
            return NOTHING if node.joiner == "OR" else None
        if len(found) == 1:
            return found[0]
        return _Candidates("OR" if node.joiner == "OR" else "AND", found)

    def _in_candidates(self, found):
        """(SQL, args): bug b is among the candidates `found` (see candidates):
        in the dialect's form, one IN over a query of their ids, or their
        conditions over bug b themselves (candidates_form)."""
        if self.dialect.candidates_form == "query":
            sql, args = _candidate_query(found)
            return f"b.id IN ({sql})", args
        return _candidate_condition(found)

    def _condition_candidates(self, cond):
        field_name, operator = cond.field, cond.operator
        if not isinstance(field_name, str) or not isinstance(operator, str):
            return None
        if field_name.strip() == "content":
            if operator.strip() != "matches" or _is_empty(cond.value):
                return None
            return self._content_candidates(_one_text(cond.value))
        operator = operator.strip()
        if _is_empty(cond.value):
            return None
        name = bug_fields.bugzilla_name(field_name.strip())
        if name in _TEXT_INDEXED and operator in _WORDS_CANDIDATES:
            return self._words_candidates(_TEXT_INDEXED[name], _words(cond.value),
                                          _WORDS_CANDIDATES[operator])
        if operator not in ("substring", "substr", "casesubstring"):
            return None
        text = _one_text(cond.value)
        if name in _TEXT_INDEXED:
            return self._text_candidates(_TEXT_INDEXED[name], text)
        if name in _CATALOGUE_CANDIDATES:
            _, _, bugs_query, bugs_condition = _CATALOGUE_CANDIDATES[name]
            return self._bugs_having(self._catalogue_ids(name, text), bugs_query,
                                     bugs_condition)
        if name in _USER_CANDIDATES:
            ids = self._user_ids(text, operator == "casesubstring")
            return None if ids is None else self._bugs_having(ids, *_USER_CANDIDATES[name])
        return None

    def _bugs_having(self, ids, bugs_query, bugs_condition):
        """The candidates of the bugs having one of `ids` (a catalogue's or
        accounts' ids): `bugs_query`, or `bugs_condition` where the dialect
        takes conditions and there is one (with {ids} for them), else an
        array of the bugs' ids while few (ARRAY_MATCHES; None past that);
        NOTHING for no ids."""
        if not ids:
            return NOTHING
        query = bugs_query.format(ids=placeholders(ids))
        if self.dialect.candidates_form == "query":
            return query, ids
        if bugs_condition is not None:
            return bugs_condition.format(ids=placeholders(ids)), ids
        # An array of the bugs' ids: for a few bugs only (ARRAY_MATCHES).
        if not self._at_most(query, ids, ARRAY_MATCHES):
            return None
        return self.dialect.among_ids("b.id", query), ids

    def _at_most(self, query, args, most):
        """True when the query (SQL, args) gives at most `most` rows, read
        now (the statement then holds for now only: only_for_now)."""
        self.only_for_now = True
        counted = self.ctx.conn.execute(f"SELECT COUNT(*) FROM ({query} LIMIT ?) AS found",
                                        list(args) + [most + 1]).fetchone()[0]
        return counted <= most

    def _catalogue_ids(self, name, text):
        """The ids of the catalogue's names of field `name` (one of
        _CATALOGUE_CANDIDATES) that hold `text`, ASCII letters in any case;
        looked up once a statement."""
        key = (name, text)
        if key not in self._catalogue_ids_read:
            names_sql, column = _CATALOGUE_CANDIDATES[name][:2]
            match = self.dialect.contains(f"lower({column})", "lower(?)")
            self._catalogue_ids_read[key] = [row[0] for row in self.ctx.conn.execute(
                names_sql.format(match=match), [text])]
        return self._catalogue_ids_read[key]

    def _user_ids(self, text, case):
        """The ids of the accounts whose login holds `text` (in its case
        where `case`, else ASCII letters in any case), read now once a
        statement (which then holds for now only: only_for_now); None when
        more than USER_MATCHES do."""
        self.only_for_now = True
        key = (text, case)
        if key not in self._user_ids_read:
            holds = (self.dialect.contains("login", "?") if case
                     else self.dialect.contains("lower(login)", "lower(?)"))
            rows = self.ctx.conn.execute(f"SELECT id FROM users WHERE {holds} LIMIT ?",
                                         [text, USER_MATCHES + 1]).fetchall()
            self._user_ids_read[key] = (None if len(rows) > USER_MATCHES
                                        else [row[0] for row in rows])
        return self._user_ids_read[key]

    # Fields -----------------------------------------------------------------------

    def custom_fields(self):
        """{name: (id, type)} of every custom field."""
        if self._custom is None:
            self._custom = self.ctx.cached("search custom fields", _read_custom_fields)
        return self._custom

    def field_names(self):
        """Internal names of every field the caller may search."""
        names = [n for n, d in FIELDS.items() if self.timetracker or not d.timetracking]
        return names + sorted(self.custom_fields())

    def resolve(self, name):
        """(internal name, FieldDef) of field `name`. Errors: 108 unknown
        field (time-tracking fields are unknown to others)."""
        text = name.strip() if isinstance(name, str) else ""
        text = bug_fields.bugzilla_name(text)
        definition = FIELDS.get(text)
        if definition is None and text in self.custom_fields():
            definition = self._custom_def(text)
        if definition is None or (definition.timetracking and not self.timetracker):
            raise ServiceError(INVALID_FIELD_NAME, f"Can't use '{name}' as a field name.")
        return text, definition

    def _custom_def(self, name):
        field_id, field_type = self.custom_fields()[name]
        kind = bug_fields.custom_kind(field_type)
        expr = self.dialect.whole_number("cv.value") if kind.search == NUMBER else "cv.value"
        return FieldDef(kind.search, expr, source=f"custom:{field_id}", history=name,
                        words_exact=kind.words_exact)

    def _source(self, key):
        """The _Rows of a multi-valued source. Where the search stops at a
        limit, an EXISTS over a bug's comments is looked up for each bug it
        reaches (per_row_subquery_end): PostgreSQL would otherwise read
        every comment holding a text into a hash first (all the comments'
        text compared, 870 ms at 100,000 bugs), where a search for the
        first bugs of a common word (COMMON_MATCHES) reads a few bugs'.
        The other sources' rows are few a bug and small: a hash of them
        is soon made."""
        rows = self._source_rows(key)
        if key == "comments" and not self.scans:
            rows.end = self.dialect.per_row_subquery_end
        return rows

    def _source_rows(self, key):
        """_source's rows, for every kind of search."""
        private = None if self.insider else "{a}.is_private = 0"
        if key.startswith("custom:"):
            field_id = int(key.split(":", 1)[1])
            if field_id not in {fid for fid, kind in self.custom_fields().values()
                                if kind == BUG_ID}:
                return _Rows("FROM bug_custom_values cv WHERE cv.bug_id = b.id"
                             " AND cv.field_id = ?", [field_id])
            # A Bug ID field names a bug only to those who may see it (as
            # depends_on does).
            visible, args = visibility.bug_visibility_sql(self.ctx, "ob")
            return _Rows("FROM bug_custom_values cv JOIN bugs ob"
                         f" ON ob.id = {self.dialect.whole_number('cv.value')}"
                         " WHERE cv.bug_id = b.id AND cv.field_id = ?", [field_id], visible, args)
        if key in ("dependson", "blocked"):
            other, this = ("depends_on", "blocked") if key == "dependson" else ("blocked",
                                                                                "depends_on")
            visible, args = visibility.bug_visibility_sql(self.ctx, "ob")
            return _Rows(f"FROM dependencies dep JOIN bugs ob ON ob.id = dep.{other}"
                         f" WHERE dep.{this} = b.id", [], visible, args)
        if key == "tags":
            return _Rows("FROM bug_tags bt JOIN personal_tags pt ON pt.id = bt.tag_id"
                         " WHERE bt.bug_id = b.id", [], "pt.user_id = ?", [self.ctx.caller.id])
        if key == "flags":
            return _Rows("FROM flags fl JOIN flag_types ft ON ft.id = fl.type_id"
                         " WHERE fl.bug_id = b.id", [], None if self.insider else
                         "NOT EXISTS (SELECT 1 FROM attachments fa WHERE fa.id = fl.attachment_id"
                         " AND fa.is_private <> 0)")
        simple = {
            "alias": ("FROM bug_aliases ba WHERE ba.bug_id = b.id", None),
            "keywords": ("FROM bug_keywords bk JOIN keywords k ON k.id = bk.keyword_id"
                         " WHERE bk.bug_id = b.id", None),
            "cc": ("FROM bug_cc cc WHERE cc.bug_id = b.id", None),
            "see_also": ("FROM bug_see_also sa WHERE sa.bug_id = b.id", None),
            "groups": ("FROM bug_groups bgs JOIN groups g ON g.id = bgs.group_id"
                       " WHERE bgs.bug_id = b.id", None),
            "comments": ("FROM comments c WHERE c.bug_id = b.id", "c"),
            "comment_tags": ("FROM comments c JOIN comment_tags ct ON ct.comment_id = c.id"
                             " WHERE c.bug_id = b.id", "c"),
            "attachments": ("FROM attachments att WHERE att.bug_id = b.id", "att"),
            "attach_data": ("FROM attachments att JOIN attachment_data adt"
                            " ON adt.attachment_id = att.id WHERE att.bug_id = b.id", "att"),
        }
        from_sql, private_alias = simple[key]
        return _Rows(from_sql, [], private.format(a=private_alias)
                     if private and private_alias else None)

    def _expr(self, definition):
        """(SQL, args) of a field's value expression."""
        expr = definition.expr.replace("{private_lc}", "" if self.insider
                                       else " AND lc.is_private = 0")
        dialect = self.ctx.conn.dialect
        if expr.startswith("{days:"):
            expr = dialect.whole_days_between("?", expr[len("{days:"):-1])
        elif expr.startswith("{blob:"):
            expr = dialect.blob_text(expr[len("{blob:"):-1])
        args = []
        for need in definition.needs:
            if need == "now":
                args.append(self.now.strftime("%Y-%m-%d %H:%M:%S"))
            elif need == "caller":
                args.append(self.ctx.caller.id)
            else:
                history, history_args = bug_history.visible_rows_sql(self.ctx, "oa")
                expr = expr.replace("{history_oa}", history)
                args += history_args
        return expr, args

    def legal_values(self, name):
        """{lower-case value: value} of a select field's legal values."""
        if name not in self._legal:
            self._legal[name] = self.ctx.cached("search legal values",
                                                _read_legal_values).get(name, {})
        return self._legal[name]

    # Tree ------------------------------------------------------------------------

    def compile(self, node):
        """(SQL, args) of a Condition or Clause; None when it has no criteria.
        Each node is compiled once (candidates asks again for every clause).

        Errors: those of `condition`; 32000 when building the search took
        more than BUILD_SECONDS.
        """
        key = id(node)
        if key not in self._compiled:
            self._check_time()
            self._compiled[key] = (node, self._compile(node))
        return self._compiled[key][1]

    def _check_time(self):
        if _clock() > self._deadline:
            raise ServiceError(USER_ERROR, "The search takes too long to build; make it simpler "
                                           "(fewer terms or groups).")

    def _compile(self, node):
        if isinstance(node, Condition):
            term = self.condition(node)
            if term is None:
                return None
            sql, args = term.sql() if isinstance(term, _Exists) else term
            return (f"(({sql}) IS NOT TRUE)" if node.negate else sql), args
        parts = []
        if node.joiner == "AND_G":
            parts = self._same_row(node.children)
        else:
            parts = [self.compile(child) for child in node.children]
        parts = [part for part in parts if part is not None]
        if not parts:
            return None
        joiner = " OR " if node.joiner == "OR" else " AND "
        sql = "(" + joiner.join(part[0] for part in parts) + ")"
        args = [arg for part in parts for arg in part[1]]
        return (f"(NOT {sql})" if node.negate else sql), args

    def _same_row(self, children):
        """AND_G: positive conditions on the same multi-valued source must hold
        for one row of it; everything else is ANDed as usual."""
        groups, parts = {}, []
        for child in children:
            term = self.condition(child) if isinstance(child, Condition) and not child.negate \
                else None
            if isinstance(term, _Exists) and not term.negative:
                groups.setdefault(term.source, []).append(term)
            elif isinstance(term, _Exists):
                parts.append(term.sql())
            elif isinstance(child, Condition) and not child.negate:
                parts.append(term)
            else:
                parts.append(self.compile(child))
        for terms in groups.values():
            merged = _Exists(terms[0].source, terms[0].rows,
                             " AND ".join(f"({t.row_sql})" for t in terms),
                             [arg for t in terms for arg in t.row_args])
            parts.append(merged.sql())
        return parts

    # One condition -------------------------------------------------------------------

    def condition(self, cond):
        """An _Exists, a (SQL, args) pair, or None when the condition is empty.

        Errors: 108 unknown field; 32000 unknown operator, operator not
        possible for the field, bad regular expression; 56 bad date.
        """
        field_name, operator = cond.field, cond.operator
        if not isinstance(field_name, str) or field_name.strip() in ("", "noop"):
            return None
        if not isinstance(operator, str) or operator.strip() in ("", "noop"):
            return None
        operator = operator.strip()
        name, definition = self.resolve(field_name)
        if operator not in OPERATORS:
            raise ServiceError(USER_ERROR, f"The search operator '{operator}' is not valid.")
        operator = "substring" if operator == "substr" else operator
        if (name == "content") != (operator in ("matches", "notmatches")):
            raise ServiceError(USER_ERROR, "The 'matches' and 'notmatches' operators are only "
                                           "possible with the 'content' field, which takes no "
                                           "other.")
        value = cond.value
        if operator in _NO_VALUE:
            value = ""
        elif _is_empty(value):
            return None
        if operator in _CHANGED:
            return self._changed(name, definition, operator, _one_text(value))
        if name == "content":
            return self._content(_one_text(value), operator == "notmatches")
        negative = operator in _NEGATIVE
        base = _NEGATIVE.get(operator, operator)
        return self._compare(definition, base, value, negative, name)

    def _compare(self, definition, operator, value, negative, name):
        if definition.source is None:
            built = self._bound_row(definition, operator, value, name)
            if built is None:
                return None
            sql, args = built
            return (f"(({sql}) IS NOT TRUE)", args) if negative else (sql, args)
        rows = self._source(definition.source)
        if operator in ("allwords", "allwordssubstr") and not negative:
            words = _words(value)
            if not words:
                return None
            single = "equals" if definition.words_exact else (
                "substring" if operator == "allwordssubstr" else "anywords")
            parts = []
            for word in words:
                sql, args = self._bound_row(definition, single, word, name)
                word_rows = self._narrowed(rows, definition.source, single, word)
                parts.append(_Exists(definition.source, word_rows, sql, args).sql())
            return "(" + " AND ".join(p[0] for p in parts) + ")", [a for p in parts for a in p[1]]
        built = self._bound_row(definition, operator, value, name)
        if built is None:
            return None
        sql, args = built
        if not negative:
            rows = self._narrowed(rows, definition.source, operator, _one_text(value))
        return _Exists(definition.source, rows, sql, args, negative)

    def _narrowed(self, rows, source, operator, text):
        """The _Rows `rows` of `source` that may meet the positive
        `operator` with `text`: where the comment text index's own
        condition tests a comment substring (_comments_by_index), those of
        the comments that it finds, with no per-row end (the planner may
        then read every comment holding the text into a hash); else all of
        them. The caller's comparison is still made on each, behind the
        rows' guard: conditions on the same comment (_same_row) share the
        first one's rows, which then test theirs behind that guard too
        (content's words, alone in their EXISTS, are tested by the index's
        condition alone: _in_comments)."""
        if source != "comments" or operator != "substring":
            return rows
        holding = self._comments_by_index(text)
        if holding is None:
            return rows
        return _Rows(f"{rows.from_sql} AND {holding[0]}", list(rows.from_args) + holding[1],
                     rows.guard, rows.guard_args)

    def _bound_row(self, definition, operator, value, name):
        """_row with the field's expression put in, each occurrence with its
        own arguments at the right places."""
        built = self._row(definition, _EXPR, operator, value, name)
        if built is None:
            return None
        template, args = built
        expr, expr_args = self._expr(definition)
        pieces = template.split(_EXPR)
        sql, bound, used = [], [], 0
        for index, piece in enumerate(pieces):
            count = piece.count("?")
            bound.extend(args[used:used + count])
            used += count
            sql.append(piece)
            if index < len(pieces) - 1:
                sql.append(expr)
                bound.extend(expr_args)
        return "".join(sql), bound

    def _row(self, definition, expr, operator, value, name):
        """(SQL, args) true when the value `expr` satisfies the positive
        `operator`; None when nothing is left to compare."""
        kind = definition.kind
        if operator == "isnotempty":
            if kind == NUMBER:
                return f"({expr} IS NOT NULL AND {expr} <> 0)", []
            empty = "'---'" if kind == SELECT else "''"
            return f"({expr} IS NOT NULL AND {expr} <> '' AND {expr} <> {empty})", []
        if operator in ("equals", "anyexact"):
            values = _exact_values(value) if operator == "anyexact" else [_one_text(value)]
            if name == "resolution":
                values = ["" if v == "---" else v for v in values]
            else:
                values = [v for v in values if v != ""]
            return self._exact(definition, expr, values, name) if values else None
        # Text operators on a number read its decimal text, as SQLite does.
        text_expr = self.dialect.as_text(expr) if kind == NUMBER else expr
        if operator in ("substring", "casesubstring"):
            text = _one_text(value)
            if operator == "substring" and name in _CATALOGUE_CANDIDATES and (
                    _CATALOGUE_CANDIDATES[name][3] is not None):
                # The bug's product or component among those whose names hold
                # the text (the ids the candidates have): no name read a bug.
                ids = self._catalogue_ids(name, text)
                if not ids:
                    return "1 = 0", []
                return _CATALOGUE_CANDIDATES[name][3].format(ids=placeholders(ids)), ids
            if definition.user_id is not None:
                # The accounts whose login holds the text (if few), by id.
                ids = self._user_ids(text, operator == "casesubstring")
                if ids is not None:
                    return ((f"{definition.user_id} IN ({placeholders(ids)})", ids) if ids
                            else ("1 = 0", []))
            if operator == "casesubstring":
                return self.dialect.contains(text_expr, "?"), [text]
            return self.dialect.contains(f"lower({text_expr})", "lower(?)"), [text]
        if operator == "regexp":
            return self.dialect.regexp(text_expr, _checked_regexp(_one_text(value)))
        if operator in _COMPARE:
            return self._ordering(kind, expr, _COMPARE[operator], _one_text(value))
        words = _words(value)
        if not words:
            return None
        if definition.words_exact and operator in ("anywords", "allwords"):
            return self._exact(definition, expr, words, name)
        parts, args = [], []
        for word in words:
            if operator in ("anywordssubstr", "allwordssubstr"):
                parts.append(self.dialect.contains(f"lower({text_expr})", "lower(?)"))
                args.append(word)
            else:
                sql, sql_args = self.dialect.regexp(
                    text_expr, r"(^|[^a-z0-9])" + re.escape(word) + r"($|[^a-z0-9])")
                parts.append(sql)
                args += sql_args
        joiner = " AND " if operator in ("allwords", "allwordssubstr") else " OR "
        return "(" + joiner.join(parts) + ")", args

    def _exact(self, definition, expr, values, name):
        """Equal to any of `values` (case-insensitive; pronouns for users)."""
        parts, args = [], []
        if definition.user_id is not None:
            plain = []
            for value in values:
                if value.lower() == "%user%":
                    parts.append(f"{definition.user_id} = ?")
                    args.append(self.ctx.caller.id)
                elif value.lower() in _PRONOUNS:
                    parts.append(f"{definition.user_id} = {_PRONOUNS[value.lower()]}")
                else:
                    plain.append(value)
            values = plain
        if values:
            kind = definition.kind
            if kind == NUMBER:
                numbers = [_number(v) for v in values]
                numbers = [n for n in numbers if n is not None]
                if numbers:
                    parts.append(f"{expr} IN ({placeholders(numbers)})")
                    args.extend(numbers)
                else:
                    parts.append("1 = 0")
            elif kind == DATE_KIND:
                moments = [search_dates.sql_date(v, self.now) for v in values]
                parts.append(f"{expr} IN ({placeholders(moments)})")
                args.extend(moments)
            elif kind == SELECT:
                legal = self.legal_values(name)
                exact = [legal.get(v.lower(), v) for v in values]
                parts.append(f"{expr} IN ({placeholders(exact)})")
                args.extend(exact)
            elif definition.lookup is not None:
                # The ids first, so the planner sees constants and can use
                # the bugs' indexes (a subquery here hid them from it).
                column, select = definition.lookup
                ids = self._ids_by_name(select, values)
                parts.append(f"{column} IN ({placeholders(ids)})" if ids else "1 = 0")
                args.extend(ids)
            else:
                parts.append(f"lower({expr}) IN ({', '.join('lower(?)' for _ in values)})")
                args.extend(values)
        if not parts:
            return None
        return ("(" + " OR ".join(parts) + ")" if len(parts) > 1 else parts[0]), args

    def _ids_by_name(self, select, values):
        """The ids `select` (a lookup's statement) finds for the names
        `values`, compared case-folded as SQL's lower() folds."""
        table = _CATALOG_LOOKUPS.get(select)
        if table is None:
            return [row[0] for row in self.ctx.conn.execute(
                f"{select} IN ({', '.join('lower(?)' for _ in values)})", values)]
        by_name = self.ctx.cached(f"{table} ids by name",
                                  lambda conn: _ids_by_folded_name(conn, table))
        return list(dict.fromkeys(found for value in values
                                  for found in by_name.get(str(value).translate(_ASCII_LOWER), ())))

    def _ordering(self, kind, expr, sign, text):
        if kind == NUMBER:
            number = _number(text)
            return (f"{expr} {sign} ?", [number]) if number is not None else ("1 = 0", [])
        if kind == DATE_KIND:
            return f"{expr} {sign} ?", [search_dates.sql_date(text, self.now)]
        return f"lower({expr}) {sign} lower(?)", [text]

    def _changed(self, name, definition, operator, value):
        """A changed* condition, on the bug's history rows as its history
        shows them to the caller (bugsvc/bugs/history.py's rule)."""
        now = self.now
        history = definition.history or name
        if operator in ("changedbefore", "changedafter"):
            sign = "<=" if operator == "changedbefore" else ">="
            moment = search_dates.sql_date(value, now)
            if name == "creation_ts":
                return f"b.creation_time {sign} ?", [moment]
            if name == "longdesc":
                return _Exists("comments", self._source("comments"), f"c.created_at {sign} ?",
                               [moment])
            row, args = f"a.changed_at {sign} ?", [moment]
        elif operator == "changedby":
            if name == "longdesc":
                return _Exists("comments", self._source("comments"),
                               f"c.author_id IN ({_USERS} = lower(?))", [value])
            row, args = f"a.who IN ({_USERS} = lower(?))", [value]
        else:
            value = bug_history.visible_value(self.ctx, history, value)
            if not value:
                return "1 = 0", []
            column = "a.removed" if operator == "changedfrom" else "a.added"
            row = (f"(lower({column}) = lower(?) OR "
                   + self.dialect.contains(f"', ' || lower({column}) || ', '",
                                           "', ' || lower(?) || ', '") + ")")
            args = [value, value]
        guard, guard_args = bug_history.visible_rows_sql(self.ctx, "a")
        return _Exists(f"activity:{history}",
                       _Rows("FROM bug_activity a WHERE a.bug_id = b.id AND a.field = ?",
                             [history], guard, guard_args), row, args)

    def _content_candidates(self, text):
        """The candidates of `content matches text`: for each of its words,
        the bugs whose summary or one of whose comments may hold it (the
        bug and comment text indexes); None when a word is too short for
        them."""
        per_word = []
        for word in _content_words(text):
            found = [self._text_candidates(column, word) for column in ("summary", "comment")]
            if None in found:
                continue                # the words are ANDed: the others' bugs hold them all
            per_word.append(_Candidates("OR", found))
        if not per_word:
            return None
        return per_word[0] if len(per_word) == 1 else _Candidates("AND", per_word)

    def _words_candidates(self, column, words, every):
        """The candidates of several words in `column` (_text_candidates of
        each): the bugs of every word's (`every`), of which a word too short
        for the index is left out; else of any word's, none when a word has
        none."""
        found = [self._text_candidates(column, word) for word in words]
        if every:
            found = [one for one in found if one is not None]
        elif None in found:
            return None
        if not found:
            return None
        return found[0] if len(found) == 1 else _Candidates("AND" if every else "OR", found)

    def _text_candidates(self, column, text):
        """The candidates of `text` in `column`: when the search stops at its
        first bugs in id order, those the dialect reads now if it can
        (first_text_matches), None (compare the bugs) if the text is a
        common one (COMMON_MATCHES); else the dialect's text_candidates. None
        too for a word common in comments that the index's condition tests
        (_comments_by_index): its candidates would be all its bugs again;
        and for an array of candidates too long to compare bugs with
        (_few_in_array)."""
        if column == "comment" and self._comments_by_index(text) is not None:
            return None
        matches = self._first_matches(column, text)
        if matches is None:
            if not self._few_in_array(column, text):
                return None
            return self.dialect.text_candidates(column, text)
        if matches.common:
            self.common_left_out = True
        return matches.candidates

    def _few_in_array(self, column, text):
        """False when the dialect's candidates of `text` in `column` are an
        array (array_candidates) of more than ARRAY_MATCHES ids, read now
        (the search then compares the bugs instead)."""
        ids = self.dialect.array_candidates(column, text)
        return ids is None or self._at_most(*ids, ARRAY_MATCHES)

    def _first_matches(self, column, text):
        """The dialect's first_text_matches of `text` in `column`, read once
        a statement, when the search stops at its first bugs in id order;
        else None."""
        if not self.first_only:
            return None
        return self._text_matches(column, text)

    def _text_matches(self, column, text):
        """The dialect's first_text_matches of `text` in `column`, read once
        a statement (which then holds for now only: only_for_now)."""
        key = (column, text)
        if key not in self._text_matches_read:
            self._text_matches_read[key] = self.dialect.first_text_matches(
                self.ctx.conn, column, text, COMMON_MATCHES)
        matches = self._text_matches_read[key]
        if matches is not None:
            self.only_for_now = True
        return matches

    def _comments_by_index(self, word):
        """(SQL, args) of the dialect's comments_holding `word`, when a
        bug's comments are tested for the word with it: in a search that
        goes over all its candidates (not first_only), for a word common in
        comments, where the dialect tests such words so
        (tests_common_comment_words_by_index); else None.

        The planner may then read every comment that holds the word once,
        hidden bugs' ones too, by the index's own comparison (no function
        of the caller's, such as a regular expression); a bug is tested
        against them only behind its visibility rule, as every criterion
        is."""
        if self.first_only or not self.dialect.tests_common_comment_words_by_index:
            return None
        matches = self._text_matches("comment", word)
        if matches is None or not matches.common:
            return None
        return self.dialect.comments_holding(word)

    def _comments_guard(self, word):
        """(SQL, args) of a condition every bug with a comment holding
        `word` meets, to test before its comments are read; None when there
        is none worth testing. It is the comment index's few candidates, in
        a search that stops at its first bugs in id order because the word
        is common in summaries: the bugs are then compared one by one, and
        most of them would have every comment read for nothing."""
        summaries = self._first_matches("summary", word)
        if summaries is None or not summaries.common:
            return None
        comments = self._first_matches("comment", word)
        if comments is None or comments.common:
            return None
        return self._in_candidates(comments.candidates)

    def _content(self, text, negative):
        """Full text: every word in the summary or in a comment the caller may see."""
        words = _content_words(text)
        if not words:
            return None
        comments = self._source("comments")
        parts, args = [], []
        for word in words:
            in_comments, in_comments_args = self._in_comments(word, comments)
            parts.append(f"({self.dialect.contains('lower(b.summary)', 'lower(?)')}"
                         f" OR {in_comments})")
            args.extend([word] + in_comments_args)
        sql = "(" + " AND ".join(parts) + ")"
        return (f"({sql} IS NOT TRUE)" if negative else sql), args

    def _in_comments(self, word, comments):
        """(SQL, args): one of bug b's comments the caller may read (the
        _Rows `comments`) holds `word`: an EXISTS over the bug's comments,
        with the index's condition where it tests the word
        (_comments_by_index; the planner then reads every comment holding
        it into a hash, or looks up the comments of each of a few bugs),
        else behind the comment index's few candidates where it has them
        (_comments_guard)."""
        holding = self._comments_by_index(word)
        if holding is not None:
            seen = f" AND {comments.guard}" if comments.guard else ""
            return (f"EXISTS (SELECT 1 {comments.from_sql} AND {holding[0]}{seen})",
                    list(comments.from_args) + holding[1] + list(comments.guard_args))
        exists, args = _Exists("comments", comments,
                               self.dialect.contains("lower(c.body)", "lower(?)"), [word]).sql()
        guard = self._comments_guard(word)
        if guard is not None:
            return _guarded(*guard, exists, args)
        return exists, args


def _content_words(text):
    """The words a `content matches` text asks for: a text in double quotes
    is one phrase, any other is split on spaces."""
    stripped = text.strip()
    if len(stripped) > 1 and stripped.startswith('"') and stripped.endswith('"'):
        return [stripped[1:-1]]
    return stripped.split()


# Values ---------------------------------------------------------------------------------

def _is_empty(value):
    if value is None:
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_empty(v) for v in value)
    return str(value).strip() == ""


def _text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _one_text(value):
    """A single string: list items are joined with commas."""
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value if v is not None)
    return _text(value).strip()


def _exact_values(value):
    """anyexact values: a list as given, a string split on commas."""
    if isinstance(value, (list, tuple)):
        return [_text(v).strip() for v in value if v is not None]
    return [part.strip() for part in _text(value).split(",") if part.strip()]


def _words(value):
    return [w for w in _WORDS.split(_one_text(value)) if w]


def _number(text):
    text = str(text).strip()
    if not _NUMBER.match(text):
        return None
    number = float(text)
    return int(number) if number.is_integer() else number


_MAX_REGEXP = 1000
_POSIX_CLASS = re.compile(r"\[:\^?[a-z]+:\]")


def _checked_regexp(pattern):
    """The pattern, once it is known to be a valid and tame regular expression.

    Errors: 32000 invalid, longer than 1000 characters, or with a repetition
    inside a repetition (such as (a+)+, which can take exponential time).
    What other patterns cost is bounded when they run (store/regexp.py).
    """
    usable = len(pattern) <= _MAX_REGEXP
    if usable:
        try:
            compile_regexp(pattern)
        except Exception:    # whatever the engine's parser rejects, in whichever way
            usable = False
    if usable:
        try:
            # POSIX classes become a plain letter: the structure stays, and
            # `re` does not warn of a "nested set".
            parsed = _parser.parse(_POSIX_CLASS.sub("a", pattern))
        except Exception:    # beyond `re` (such as \p{L}): only the time bound applies
            parsed = None
        usable = parsed is None or not _nested_repeat(parsed, False)
    if not usable:
        raise ServiceError(USER_ERROR, f"The regular expression '{pattern}' is not valid or "
                                       "too complex.")
    return pattern


def _nested_repeat(items, inside):
    """True when a repetition (more than once) sits inside another one."""
    for op, av in items:
        if op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT):
            low, high, sub = av
            repeats = high is _constants.MAXREPEAT or high > 1
            if repeats and inside:
                return True
            if _nested_repeat(sub, inside or repeats):
                return True
        elif op == _constants.SUBPATTERN:
            if _nested_repeat(av[-1], inside):
                return True
        elif op == _constants.BRANCH:
            if any(_nested_repeat(alternative, inside) for alternative in av[1]):
                return True
        elif op in (_constants.ASSERT, _constants.ASSERT_NOT):
            if _nested_repeat(av[1], inside):
                return True
    return False


# Catalogue reads every search makes, kept by the process for a catalog
# generation (Context.cached): shared, never changed.

def _read_custom_fields(conn):
    """{name: (id, type)} of every custom field."""
    return {row[0]: (row[1], row[2]) for row in conn.execute(
        "SELECT name, id, type FROM fields WHERE is_custom = 1")}


def _read_legal_values(conn):
    """{field name: {lower-case value: value}} of every field's legal values."""
    legal = {}
    for name, value in conn.execute("SELECT f.name, fv.value FROM field_values fv"
                                    " JOIN fields f ON f.id = fv.field_id"):
        legal.setdefault(name, {})[value.lower()] = value
    return legal


def _ids_by_folded_name(conn, table):
    """{name folded as SQL's lower() folds: [ids]} of `table`'s rows."""
    found = {}
    for row_id, name in conn.execute(f"SELECT id, name FROM {table} ORDER BY id"):
        found.setdefault(name.translate(_ASCII_LOWER), []).append(row_id)
    return found
