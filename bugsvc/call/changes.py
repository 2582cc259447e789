"""The `changes` answer of every update: per changed field, its `added` and
`removed` values as strings."""

# An update's answer: {field: {"added": text, "removed": text}}.
Changes = dict[str, dict[str, str]]


def as_change_text(value: object) -> str:
    """How a value reads in `changes`: booleans "1"/"0", lists joined with
    ", ", None as ""."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ", ".join(as_change_text(v) for v in value)
    return str(value)


def note(changes: Changes, field: str, old: object, new: object) -> bool:
    """Add `field` to the `changes` dict when `old` and `new` differ.

    Returns True when something changed.
    """
    removed, added = as_change_text(old), as_change_text(new)
    if removed == added:
        return False
    changes[field] = {"added": added, "removed": removed}
    return True
