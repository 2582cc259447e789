"""Route declarations and matching: a route is data (verb, path template,
the operation it reaches, how path parts become parameters, success status)."""

import functools
import re
from dataclasses import dataclass
from urllib.parse import unquote


_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_ASCII_DIGITS = re.compile(r"[0-9]+")


def _is_number(value):
    """True for ASCII digits only (str.isdigit also takes '²' and '٣')."""
    return _ASCII_DIGITS.fullmatch(value) is not None


def _number(value):
    """The int of an all-digits path part; past 19 digits the text itself,
    which Params then refuses as too large (54) without converting it."""
    return int(value) if len(value.lstrip("0")) <= 19 else value


# Path part -> parameter mappers, as Bugzilla's REST routes map them -------------

def id_or_name(part, ids="ids", names="names"):
    """`{part}` becomes ids: [int] when all digits, else names: [text]."""
    def mapper(values):
        value = values[part]
        return {ids: [_number(value)]} if _is_number(value) else {names: [value]}
    return mapper


def id_list(part, key="ids", strip_hash=False):
    """`{part}` becomes key: [value] (ints when all digits)."""
    def mapper(values):
        value = values[part]
        if strip_hash and value.startswith("#"):
            value = value[1:]
        return {key: [_number(value) if _is_number(value) else value]}
    return mapper


def name_pair(key="names", **parts):
    """The parts become one object in a list: name_pair(product="product",
    component="component") gives names: [{"product": p, "component": c}]."""
    def mapper(values):
        return {key: [{name: values[part] for name, part in parts.items()}]}
    return mapper


def scalars(**keys):
    """Each `{part}` becomes a scalar parameter: scalars(param_name=part)."""
    def mapper(values):
        return {param: _number(values[part]) if _is_number(values[part]) and param.endswith("id")
                else values[part] for param, part in keys.items()}
    return mapper


@dataclass(frozen=True)
class Route:
    """One REST call.

    method, template: HTTP verb and path below /rest ('/product/{x}').
    operation: the name of the operation it reaches ('Product.get').
    path_params: maps the template's parts to parameters (None: no parts).
    status: HTTP status on success.
    """
    method: str
    template: str
    operation: str
    path_params: object = None
    status: int = 200


class Router:
    """Matches (verb, path) against the route table; first match wins.

    routes: the Route table. operations: the Operations its names resolve
    in. Errors: KeyError at construction for a route naming no operation.

    Routes are indexed by their first path part and number of parts (a
    placeholder stands for exactly one part), so a request is compared with
    the few templates that could match, not the whole table.
    """

    def __init__(self, routes, operations):
        self._entries = []
        self._index = {}
        for route in routes:
            entry = (_pattern(route.template), route, operations[route.operation])
            self._entries.append(entry)
            self._index.setdefault(_index_key(route.template), []).append(entry)
        self._wildcards = [entry for entry in self._entries
                           if _PLACEHOLDER.match(entry[1].template.split("/")[1])]

    def _candidates(self, path):
        listed = self._index.get(_index_key(path), [])
        if not self._wildcards:
            return listed
        return [entry for entry in self._entries if entry in listed or entry in self._wildcards]

    def match(self, method, path):
        """Find the route for `path` (below /rest, still percent-encoded).

        Returns (route, operation, params from the path, allowed verbs).
        route is None when no route has that verb; allowed lists the verbs of
        the routes whose template matches the path.
        """
        found, allowed = None, []
        for pattern, route, operation in self._candidates(path):
            hit = pattern.match(path)
            if not hit:
                continue
            if route.method not in allowed:
                allowed.append(route.method)
            if found is None and route.method == method:
                values = {k: unquote(v) for k, v in hit.groupdict().items()}
                params = route.path_params(values) if route.path_params else {}
                found = (route, operation, params)
        if found is None:
            return None, None, {}, allowed
        return found[0], found[1], found[2], allowed

    def routes(self):
        """(route, operation) for every route, in table order."""
        return [(route, operation) for _, route, operation in self._entries]


@functools.cache
def _pattern(template):
    """The compiled regular expression of a route template (the same for
    every Router of the process)."""
    return re.compile("^" + _PLACEHOLDER.sub(r"(?P<\1>[^/]+)", re.escape(template)
                                             .replace(r"\{", "{").replace(r"\}", "}")) + "$")


def _index_key(path):
    """(first path part, number of parts) of a template or request path."""
    parts = path.split("/")
    return parts[1] if len(parts) > 1 else "", len(parts)
