"""Quicksearch: one line of text expanded into search
criteria, as the reference's quick search box does.

Words are ANDed; `OR` or `|` between words ORs them; `NOT` or a leading `-`
negates a word; "double quotes" keep a phrase together. A word is
`field:value` (also =, !=, <, <=, >, >=), a special form (#summary,
:product-or-component, @assignee, [summary-or-whiteboard, !keyword, P1-P3,
flag?requestee) or a plain word (product, component, keyword, alias,
summary, whiteboard, and the comments the caller may read; URL-like words
also the URL). The first word may choose
statuses/resolutions (OPEN, ALL, or upper-case prefixes such as FIXED or
CONF,IN_PROG); otherwise only open bugs are searched.
"""

import re
from dataclasses import dataclass

from ..catalogue import bug_fields
from ..errors import BUGLIST_PARAMETERS_REQUIRED, USER_ERROR, ServiceError
from .search_sql import Clause, Condition


# Short names of fields (the reference's quicksearch mappings), and the
# fields reachable only through them (so that prefixes stay unambiguous).
MAPPINGS = {short: field.name for field in bug_fields.STANDARD for short in field.quicksearch}
_HIDDEN = frozenset(field.name for field in bug_fields.STANDARD if not field.quicksearch_by_name)
_FIELD_OPERATOR = {"content": "matches", "owner_idle_time": "greaterthan"}
_SYMBOLS = [("!=", "notequals"), (">=", "greaterthaneq"), ("<=", "lessthaneq"),
            (":", "substring"), ("=", "equals"), (">", "greaterthan"), ("<", "lessthan")]
_PRODUCT_EXCEPTIONS = ("row", "new")
_COMPONENT_EXCEPTIONS = ("hang",)
_FLAG = re.compile(r"^(?:flag:)?([^?]+\?)([^?]*)$")
_PRIORITY = re.compile(r"^P(\d+)(?:-P?(\d+))?$", re.IGNORECASE)
_URL_LIKE = re.compile(r"[\\/]|\d+\.\d+\.\d+\.\d+|^[A-Za-z]+(\.[A-Za-z]+)+")


@dataclass
class Quicksearch:
    """What a quicksearch adds to a search.

    criteria: the Clause of its words. statuses: the bug_status values to
    search (None: any status). resolutions: resolution values ([]: any).
    order: the order it asks for (None: the request's).
    """
    criteria: Clause
    statuses: list | None
    resolutions: list
    order: str | None = None


def parse(ctx, text):
    """The Quicksearch of `text`.

    Errors: 1000 empty text; 32000 unbalanced quotes, misplaced AND/OR/NOT,
    unknown or ambiguous field names.
    """
    text = re.sub(r"^[\s,]+|[\s,]+$", "", str(text or ""))
    if not text:
        raise ServiceError(BUGLIST_PARAMETERS_REQUIRED, "The quicksearch text is empty.")
    if re.fullmatch(r"[0-9,\s]*", text):
        ids = ",".join(part for part in re.split(r"[,\s]+", text) if part)
        return Quicksearch(Clause().add(Condition("bug_id", "anyexact", ids)), None, [], "bug_id")
    return _Parser(ctx).run(text)


class _Parser:
    def __init__(self, ctx):
        self.ctx = ctx
        self.status_set = False
        self.unknown = []
        self._field_map = None
        self._keywords = None

    def run(self, text):
        words = split_outside_quotes(text, r"\s+", keep=True)
        if not words:
            raise ServiceError(USER_ERROR, "The quicksearch text has unbalanced quotes.")
        if words[0] in ("AND", "OR") or words[-1] in ("AND", "OR", "NOT"):
            raise ServiceError(USER_ERROR, "A quicksearch cannot start with AND or OR, nor end "
                                           "with AND, OR or NOT.")
        groups = self._or_groups(words)
        statuses, resolutions = self._statuses(groups[0])
        if statuses is not None or resolutions or self.status_set:
            groups = groups[1:]
        criteria = Clause()
        for group in groups:
            either = Clause("OR")
            for term in group:
                either.add(self._term(term))
            criteria.add(either)
        if self.unknown:
            raise ServiceError(USER_ERROR, "Unknown or ambiguous field names in the quicksearch: "
                                           + ", ".join(self.unknown) + ".")
        if not self.status_set:
            statuses = self._open_statuses()
        return Quicksearch(criteria, statuses or None, resolutions)

    def _or_groups(self, words):
        """[[term, ...], ...]: ANDed groups of ORed terms."""
        groups, current = [], []
        words = list(words)
        while words:
            word = words.pop(0)
            following = words[0] if words else None
            if word == "AND":
                if following == "OR":
                    raise ServiceError(USER_ERROR, "'AND OR' is not a valid quicksearch.")
            elif word == "OR":
                if following == "AND":
                    raise ServiceError(USER_ERROR, "'OR AND' is not a valid quicksearch.")
            elif word == "NOT":
                following = words.pop(0)
                if following in ("AND", "OR"):
                    raise ServiceError(USER_ERROR, f"'NOT {following}' is not a valid quicksearch.")
                if following != "NOT":
                    words.insert(0, following[1:] if following.startswith("-") else "-" + following)
            else:
                current.extend(t for t in split_outside_quotes(word, r"\|", keep=True) or [word]
                               if t)
                if not words or words[0] != "OR":
                    groups.append(current)
                    current = []
        if current:
            groups.append(current)
        return groups or [[]]

    # Statuses and resolutions -----------------------------------------------------

    def _statuses(self, first_group):
        """(statuses, resolutions) chosen by the first word, else (None, [])."""
        word = "|".join(first_group)
        rows = self.ctx.conn.execute(
            "SELECT f.name, fv.value, fv.is_open FROM field_values fv JOIN fields f"
            " ON f.id = fv.field_id WHERE f.name IN ('bug_status', 'resolution')"
            " ORDER BY fv.sort_key, fv.value").fetchall()
        statuses = [(value, is_open) for name, value, is_open in rows if name == "bug_status"]
        all_resolutions = [value for name, value, _ in rows if name == "resolution" and value]
        if word == "OPEN":
            self.status_set = True
            return [s for s, is_open in statuses if is_open], []
        if word == "ALL":
            self.status_set = True
            return None, []
        chosen, resolutions = [], []
        for prefix in (p for p in re.split(r"[,|]", word) if p):
            chosen += [s for s, _ in statuses if s.startswith(prefix) and s not in chosen]
            resolutions += [r for r in all_resolutions
                            if r.startswith(prefix) and r not in resolutions]
        if not chosen and not resolutions:
            return None, []
        self.status_set = True
        if resolutions:
            chosen += [s for s, is_open in statuses if not is_open and s not in chosen]
        return chosen, resolutions

    def _open_statuses(self):
        return [row[0] for row in self.ctx.conn.execute(
            "SELECT fv.value FROM field_values fv JOIN fields f ON f.id = fv.field_id"
            " WHERE f.name = 'bug_status' AND fv.is_open = 1 ORDER BY fv.sort_key")]

    # Terms --------------------------------------------------------------------------

    def _term(self, term):
        """The Clause of one term (conditions ORed; negated as a whole)."""
        negate = term.startswith("-")
        if negate:
            term = term[1:]
        clause = Clause("OR", negate=negate)
        if not term:
            return None
        if self._special_first_char(term, clause) or self._field_syntax(term, clause):
            return clause
        for word in split_outside_quotes(term, ",", keep=False) or [term]:
            if not word:
                continue
            if not self._priority(word, clause):
                self._default_word(word, clause)
            if _URL_LIKE.search(word) or word == "localhost":
                clause.add(Condition("bug_file_loc", "substring", word))
        return clause

    def _special_first_char(self, term, clause):
        if len(term) <= 1:
            return False
        first, base = term[0], _unquoted(term[1:])
        subwords = [w for w in base.split(",") if w]
        if first == "#":
            clause.add(Condition("short_desc", "substring", base))
            clause.add(_comment_text(base))
        elif first == ":":
            for word in subwords:
                clause.add(Condition("product", "substring", word))
                clause.add(Condition("component", "substring", word))
        elif first == "@":
            for word in subwords:
                clause.add(Condition("assigned_to", "substring", word))
        elif first == "[":
            clause.add(Condition("short_desc", "substring", base))
            clause.add(Condition("status_whiteboard", "substring", base))
        elif first == "!":
            clause.add(Condition("keywords", "anywords", base))
        else:
            return False
        return True

    def _field_syntax(self, term, clause):
        flag = _FLAG.match(term)
        if flag:
            flag_type, requestee = flag.groups()
            both = Clause().add(Condition("flagtypes.name", "substring", flag_type))
            if requestee:
                both.add(Condition("requestees.login_name", "substring", requestee))
            clause.add(both)
            return True
        for symbol, operator in _SYMBOLS:
            parts = split_outside_quotes(term, re.escape(symbol), keep=True)
            if not parts or len(parts) != 2 or parts[1].startswith("//"):
                continue
            names = split_outside_quotes(parts[0], ",", keep=True) or [parts[0]]
            values = split_outside_quotes(parts[1], ",", keep=True) or [parts[1]]
            for name in names:
                field = self._translate(name)
                if field is None:
                    continue
                if field in ("bug_status", "resolution"):
                    self.status_set = True
                for value in values:
                    clause.add(Condition(field, _FIELD_OPERATOR.get(field, operator),
                                         _unquoted(value)))
            return True
        return False

    def _priority(self, word, clause):
        match = _PRIORITY.match(word)
        if not match:
            return False
        legal = [row[0] for row in self.ctx.conn.execute(
            "SELECT fv.value FROM field_values fv JOIN fields f ON f.id = fv.field_id"
            " WHERE f.name = 'priority' ORDER BY fv.sort_key, fv.value")]
        if not legal:
            return False
        first, last = match.group(1), match.group(2)

        def position(number, is_end):
            named = f"P{number}"
            if named in legal:
                return legal.index(named)
            index = min(len(legal), int(number)) - 1 if is_end else int(number) - 1
            return min(max(0, index), len(legal) - 1)

        start = position(first, False)
        if last is None:
            clause.add(Condition("priority", "anyexact", [legal[start]]))
            return True
        end = position(last, True)
        start, end = min(start, end), max(start, end)
        clause.add(Condition("priority", "anyexact", legal[start:end + 1]))
        return True

    def _default_word(self, word, clause):
        # The summary first: the engines test an OR's terms in order and stop
        # at the first that holds, and most bugs a word finds have it there
        # (the product's and component's names each take a lookup).
        lowered = word.lower()
        clause.add(Condition("short_desc", "substring", word))
        if len(word) > 2 and lowered not in _PRODUCT_EXCEPTIONS:
            clause.add(Condition("product", "substring", word))
        if len(word) > 2 and lowered not in _COMPONENT_EXCEPTIONS:
            clause.add(Condition("component", "substring", word))
        if lowered in self._keyword_names():
            clause.add(Condition("keywords", "substring", word))
        for field in ("alias", "status_whiteboard"):
            clause.add(Condition(field, "substring", word))
        clause.add(_comment_text(word))

    def _keyword_names(self):
        if self._keywords is None:
            self._keywords = {row[0].lower() for row in self.ctx.conn.execute(
                "SELECT name FROM keywords")}
        return self._keywords

    # Field names ---------------------------------------------------------------------

    def _fields(self):
        if self._field_map is None:
            names = [row[0] for row in self.ctx.conn.execute(
                "SELECT name FROM fields WHERE is_obsolete = 0")]
            mapping = {name: name for name in names if "." not in name and name not in _HIDDEN}
            mapping.update(MAPPINGS)
            self._field_map = mapping
        return self._field_map

    def _translate(self, name):
        """The internal field a (possibly abbreviated) name means; None (and
        noted) when unknown or ambiguous."""
        wanted = _unquoted(name).strip().lower()
        mapping = self._fields()
        if wanted in mapping:
            return mapping[wanted]
        targets = {mapping[key] for key in mapping if wanted and key.startswith(wanted)}
        if len(targets) == 1:
            return targets.pop()
        cf_less = {key[3:]: key for key in mapping if key.startswith("cf_")}
        if wanted in cf_less:
            return mapping[cf_less[wanted]]
        cf_targets = {mapping[cf_less[key]] for key in cf_less if wanted and key.startswith(wanted)}
        if len(cf_targets) == 1:
            return cf_targets.pop()
        self.unknown.append(name)
        return None


def _comment_text(text):
    """The condition that `text` is in a comment the caller may read (or
    the summary): quicksearch_fulltext, which the reference has on unless
    a user turns it off (bugsvc has no such per-user setting: it is always
    on). The comment text index finds the candidate bugs."""
    return Condition("content", "matches", f'"{text}"')


def _unquoted(value):
    match = re.fullmatch(r'"(.*)"', value.strip(), re.DOTALL)
    return match.group(1).replace('\\"', '"') if match else value


def split_outside_quotes(text, delimiter, keep):
    """Split `text` on the regex `delimiter` outside "double quotes".

    keep: leave the quotes and backslashes in the parts. Returns None when a
    quote is left open. Leading empty parts are kept (as Text::ParseWords).
    """
    pattern = re.compile(delimiter)
    parts, current, quoted, index = [], [], False, 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current.append(text[index:index + 2] if keep else text[index + 1])
            index += 2
            continue
        if char == '"':
            quoted = not quoted
            if keep:
                current.append(char)
            index += 1
            continue
        if not quoted:
            match = pattern.match(text, index)
            if match and match.end() > index:
                parts.append("".join(current))
                current = []
                index = match.end()
                continue
        current.append(char)
        index += 1
    if quoted:
        return None
    parts.append("".join(current))
    return parts
