"""include_fields / exclude_fields, implemented once for every call
(the reference's filter_wants).

A service may ask `ctx.fields.wants(name)` to skip computing a field nobody
asked for; the REST adapter then trims every object the route declares with
`apply`.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias


_SPLIT = re.compile(r"[,\s+]+")
DEFAULT = ("default",)
# Decisions depend on nothing but the include and exclude names, so filters
# with the same names share them (the same few choices come again and again:
# no choice at all, a web page's fixed ones, a client's habitual ones). At
# most this many choices are kept; others decide for themselves.
_SHARED_CHOICES = 256
# A field's types: ("default",), ("default", "custom"), ("extra",) ...
Types: TypeAlias = Iterable[str]
# What a filter decided: (field name, shape signature, prefix) -> wanted ...
Answers: TypeAlias = dict[tuple[str, Any, str | None], bool]
# ... and (shape signature, prefix) -> (names kept, names dropped) ...
Decisions: TypeAlias = dict[tuple[Any, str | None], tuple[set[str], set[str]]]
# ... and (names asked about, shape signature) -> the names wanted.
Wanted: TypeAlias = dict[tuple[tuple[str, ...], Any], frozenset[str]]
_shared: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[Answers, Decisions, Wanted]] = {}


def _names(value: object) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    names: list[str] = []
    for item in items:
        if isinstance(item, str):
            names.extend(part for part in _SPLIT.split(item) if part)
    return names


class FieldFilter:
    """The caller's include/exclude choice. Empty means "default fields"."""

    def __init__(self, include: object = None, exclude: object = None) -> None:
        include_names, exclude_names = _names(include), _names(exclude)
        self.include, self.include_types = self._split(include_names)
        self.exclude, self.exclude_types = self._split(exclude_names)
        self.active = bool(include_names or exclude_names)
        # As the reference: defaults only when include names nothing at all,
        # so include_fields=_extra gives the extra fields alone.
        if not include_names:
            self.include_types.add("default")
        key = (tuple(sorted(set(include_names))), tuple(sorted(set(exclude_names))))
        # The choice, as a value: filters with equal choices want the same
        # fields (bugs/answer_cache.py keeps answers by it).
        self.choice = key
        shared = _shared.get(key)
        if shared is None:
            shared = ({}, {}, {})
            if len(_shared) < _SHARED_CHOICES:
                shared = _shared.setdefault(key, shared)
        self._answers, self._decisions, self._wanted = shared

    @staticmethod
    def _split(names: list[str]) -> tuple[set[str], set[str]]:
        plain = {n for n in names if not n.startswith("_")}
        types = {n[1:] for n in names if n.startswith("_")}
        return plain, types

    def plan(self, shape: "Shape", prefix: str | None) -> tuple[set[str], set[str]]:
        """(keep, drop): the field names of objects of `shape` under `prefix`
        found so far to be kept or dropped (filled in by filter_object, so a
        field is decided once for all objects alike, and for all filters
        with the same choice)."""
        key = (shape.signature, prefix)
        found = self._decisions.get(key)
        if found is None:
            found = self._decisions.setdefault(key, (set(), set()))
        return found

    def wants(self, name: str, shape: "Shape | None" = None, prefix: str | None = None) -> bool:
        """True when field `name` (under subfield `prefix`) is to be returned.

        shape: the Shape of the object the field belongs to, which knows the
        field's types (default, custom, extra); without one the field is a
        default field.
        """
        key = (name, shape.signature if shape is not None else None, prefix)
        answer = self._answers.get(key)
        if answer is None:
            types = shape.types_of(name) if shape is not None else DEFAULT
            answer = self._answers[key] = self._decide(name, types, prefix)
        return answer

    def wanted(self, names: tuple[str, ...], shape: "Shape") -> frozenset[str]:
        """Those of `names` that are to be returned in objects of `shape`
        (`wants` for each, asked once for all filters with this choice)."""
        key = (names, shape.signature)
        found = self._wanted.get(key)
        if found is None:
            found = self._wanted[key] = frozenset(name for name in names
                                                  if self.wants(name, shape))
        return found

    def _decide(self, name: str, types: Types, prefix: str | None) -> bool:
        path = f"{prefix}.{name}" if prefix else name
        if path in self.exclude:
            return False
        if path in self.include:
            return True
        excluded, included = self.exclude_types, self.include_types
        if "all" in excluded:
            return False
        if "all" in included:
            return True
        if not excluded.isdisjoint(types):
            return False
        if not included.isdisjoint(types):
            return True
        if prefix is not None:
            return prefix in self.include
        start = name + "."
        return any(n.startswith(start) for n in self.include)


@dataclass
class Shape:
    """How the fields of one kind of object are filtered.

    types: field -> type set (default: ("default",)).
    custom_prefix: fields starting with it have types ("default", "custom").
    children: field -> Shape of the objects it holds, filtered with the field
    name as subfield prefix (e.g. product "components" -> components.name).
    follows: field -> field whose decision it shares (assigned_to_detail ->
    assigned_to); its children use that field as prefix.
    """
    types: dict[str, Types] = field(default_factory=dict)
    custom_prefix: str | None = None
    children: dict[str, "Shape"] = field(default_factory=dict)
    follows: dict[str, str] = field(default_factory=dict)

    @property
    def signature(self) -> tuple[Any, ...]:
        """What decisions about this shape's fields depend on, hashable
        (filters share decisions between shapes alike)."""
        found: tuple[Any, ...] | None = self.__dict__.get("_signature")
        if found is None:
            found = self.__dict__["_signature"] = (
                tuple(sorted(self.types.items())), self.custom_prefix,
                tuple(sorted(self.follows.items())))
        return found

    def types_of(self, name: str) -> Types:
        if name in self.types:
            return self.types[name]
        if self.custom_prefix and name.startswith(self.custom_prefix):
            return ("default", "custom")
        return DEFAULT


def filter_object(obj: dict[str, Any], shape: Shape, flt: FieldFilter,
                  prefix: str | None = None) -> None:
    """Remove from dict `obj`, in place, the fields `flt` does not want."""
    keep, drop = flt.plan(shape, prefix)
    names = obj.keys()
    for name in names - keep - drop:
        wanted = flt.wants(shape.follows.get(name, name), shape, prefix)
        (keep if wanted else drop).add(name)
    for name in drop & names:
        del obj[name]
    if shape.children:
        for name in shape.children.keys() & names:
            base = shape.follows.get(name, name)
            child_prefix = f"{prefix}.{base}" if prefix else base
            for item in _objects(obj[name]):
                filter_object(item, shape.children[name], flt, child_prefix)


def _objects(value: object) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict)]
    return []


def apply(result: Any, targets: Mapping[str, Shape], flt: FieldFilter) -> Any:
    """Filter the objects of `result` that `targets` names.

    targets: {path: Shape}; a path is dotted keys from the top of the result,
    `*` standing for every value of a dict or item of a list; it ends at an
    object or a list of objects ("products", "bugs.*.comments", "comments.*").
    """
    if not flt.active or not isinstance(result, (dict, list)):
        return result
    for path, shape in targets.items():
        for node in _resolve(result, path.split(".")):
            for obj in _objects(node):
                filter_object(obj, shape, flt)
    return result


def _resolve(node: Any, parts: list[str]) -> list[Any]:
    if not parts:
        return [node]
    head, rest = parts[0], parts[1:]
    if head == "*":
        values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
        return [found for value in values for found in _resolve(value, rest)]
    if isinstance(node, dict) and head in node:
        return _resolve(node[head], rest)
    return []
