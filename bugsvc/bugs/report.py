"""Reports: the bugs a search finds, counted by the values of up to three
fields (Bugzilla's report.cgi: the horizontal axis x, the vertical axis y
and the axis of separate tables z).

The counting is one SQL statement: GROUP BY over the axes' values of the
bugs the search selects among those the caller may see (search.visible_where),
so a bug the caller may not see is never counted, and the database, not
Python, reads the bugs. A bug counts once under each value of a field with
several values (keywords, a multiple-selection custom field), and under
the empty value when it has none.

The axes are the registry's fields marked report_axis (catalogue/bug_fields.py)
and the custom fields of the kinds in _CUSTOM_AXES.
"""

from dataclasses import dataclass

from ..catalogue import bug_fields
from ..catalogue.field_types import FREETEXT, INTEGER, MULTI_SELECT, SINGLE_SELECT
from ..errors import INVALID_FIELD_NAME, USER_ERROR, ServiceError
from . import search, visibility


# The most cells (value combinations with at least one bug) one report
# counts: a report past it is refused, so what any axes ask costs bounded
# memory (a table that size is already more than anyone reads).
MOST_CELLS = 20000
_CUSTOM_AXES = (FREETEXT, SINGLE_SELECT, MULTI_SELECT, INTEGER)

# How a standard field's value is read for a report: SQL over bug alias b
# (a key to group by: an id where the catalogue names it), and the query of
# each key's label ({key: label}) where the key is an id.
_KEYS = {
    "classification": ("(SELECT p.classification_id FROM products p WHERE p.id = b.product_id)",
                       "SELECT id, name FROM classifications"),
    "product": ("b.product_id", "SELECT id, name FROM products"),
    "component": ("b.component_id", "SELECT id, name FROM components"),
    "assigned_to": ("b.assigned_to", "SELECT id, login FROM users"),
    "reporter": ("b.reporter", "SELECT id, login FROM users"),
    "qa_contact": ("b.qa_contact", "SELECT id, login FROM users"),
}
# Fields with several values per bug: (join over bug alias b with alias
# {a}, the key in the joined rows, the query of the keys' labels).
_JOINED = {
    "keywords": ("LEFT JOIN bug_keywords {a} ON {a}.bug_id = b.id", "{a}.keyword_id",
                 "SELECT id, name FROM keywords"),
}


@dataclass(frozen=True)
class Axis:
    """One axis of a report: its field's Bugzilla name, the SQL of its key
    over bug alias b (with its join, if any), and how its keys' labels and
    order are found."""
    field: str
    key_sql: str
    join: str = ""
    labels_sql: str | None = None
    select: bool = False           # ordered as the field's legal values
    milestone: bool = False        # ordered as the products' milestones


def axis_fields(ctx):
    """[(Bugzilla name, label)] of the fields the caller may report on, in
    the registry's order, then the custom fields by name."""
    timetracker = visibility.is_timetracker(ctx)
    found = []
    for field in bug_fields.STANDARD:
        if not field.report_axis or (field.timetracking and not timetracker):
            continue
        if field.parameter and field.pages_follow_parameter and not ctx.param_is_on(
                field.parameter):
            continue
        found.append((field.name, field.label or field.name))
    for name, description, _, _ in _custom_fields(ctx):
        found.append((name, description))
    return found


def _custom_fields(ctx):
    return ctx.conn.execute(
        "SELECT name, display_name, id, type FROM fields WHERE is_custom = 1 AND is_obsolete = 0"
        f" AND type IN ({', '.join(str(int(kind)) for kind in _CUSTOM_AXES)})"
        " ORDER BY name").fetchall()


def axis(ctx, name, alias):
    """The Axis of field `name` (Bugzilla's name or the interface's), its
    joined rows under table alias `alias`. Errors: 108 a field that is no
    report axis for the caller."""
    wanted = bug_fields.bugzilla_name(str(name).strip())
    if wanted not in {field for field, _ in axis_fields(ctx)}:
        raise ServiceError(INVALID_FIELD_NAME, f"Can't use '{name}' as a report axis.")
    for custom_name, _, field_id, kind in _custom_fields(ctx):
        if custom_name == wanted:
            join = (f"LEFT JOIN bug_custom_values {alias} ON {alias}.bug_id = b.id"
                    f" AND {alias}.field_id = {int(field_id)}")
            return Axis(wanted, f"{alias}.value", join,
                        select=kind in (SINGLE_SELECT, MULTI_SELECT))
    if wanted in _JOINED:
        join, key, labels = _JOINED[wanted]
        return Axis(wanted, key.format(a=alias), join.format(a=alias), labels)
    if wanted in _KEYS:
        key, labels = _KEYS[wanted]
        return Axis(wanted, key, labels_sql=labels)
    field = next(field for field in bug_fields.STANDARD if field.name == wanted)
    return Axis(wanted, f"b.{field.column}",
                select=field in bug_fields.SELECTS, milestone=wanted == "target_milestone")


def tabulate(ctx, params, axes):
    """Count the bugs the search `params` finds by the values of `axes`
    (a list of Axis, one to three), with the totals over each axis.

    Returns (labels, counts, totals): labels, the labels of each axis in
    order ("" is the empty value's); counts, {(label, ...): bugs};
    totals(kept), {(label of each kept axis, ...): bugs} for a tuple of
    indexes of the axes kept (the others summed over, each bug counted
    once even where it has several values of a summed field).
    Errors: those of search.find; 32000 more than MOST_CELLS cells.
    """
    where = search.visible_where(ctx, params)
    names = [{} for _ in axes]
    counts = _count(ctx, where, axes, names)
    labels = [_ordered(ctx, axis, set(names[index].values()))
              for index, axis in enumerate(axes)]

    found = {}

    def totals(kept):
        if kept not in found:
            found[kept] = _totals(kept)
        return found[kept]

    def _totals(kept):
        kept_axes = [axes[index] for index in kept]
        if all(not axes[index].join for index in range(len(axes)) if index not in kept):
            summed = {}
            for cell, count in counts.items():
                key = tuple(cell[index] for index in kept)
                summed[key] = summed.get(key, 0) + count
            return summed
        return _count(ctx, where, kept_axes, [names[index] for index in kept])
    return labels, counts, totals


def _count(ctx, where, axes, names):
    """{(label, ...): bugs} by `axes` of the bugs WHERE (SQL, args)
    selects; each {key: label} of `names` gets the keys found."""
    sql_where, args = where
    keys = [axis.key_sql for axis in axes]
    joins = " ".join(axis.join for axis in axes if axis.join)
    columns = "".join(f"{key}, " for key in keys)
    group = f" GROUP BY {', '.join(keys)}" if keys else ""
    sql = (f"SELECT {columns}COUNT(*) FROM bugs b {joins} WHERE {sql_where}{group}"
           f" LIMIT {MOST_CELLS + 1}")
    rows = search.run(ctx, sql, args)
    if len(rows) > MOST_CELLS:
        raise ServiceError(USER_ERROR, f"The report would have more than {MOST_CELLS} cells; "
                                       "narrow the search or choose other fields.")
    for index, axis in enumerate(axes):
        unnamed = {row[index] for row in rows} - set(names[index])
        names[index].update(_names(ctx, axis, unnamed))
    counts = {}
    for row in rows:
        cell = tuple(names[index][row[index]] for index in range(len(axes)))
        counts[cell] = counts.get(cell, 0) + row[len(axes)]
    return counts


def _names(ctx, axis, keys):
    """{key: label} of the keys found on an axis."""
    if axis.labels_sql is None:
        return {key: "" if key is None else str(key) for key in keys}
    wanted = [key for key in keys if key is not None]
    found = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        found.update(ctx.conn.execute(
            f"{axis.labels_sql} WHERE id IN ({', '.join('?' for _ in part)})", part).fetchall())
    return {key: str(found.get(key, "")) if key is not None else "" for key in keys}


def _ordered(ctx, axis, labels):
    """The labels of an axis in the field's order: the empty value first,
    then a select field's legal values in their order, milestones in their
    products' order, anything else alphabetically."""
    rank = {}
    if axis.select:
        rank = {row[0]: row[1] for row in ctx.conn.execute(
            "SELECT fv.value, MIN(fv.sort_key) FROM field_values fv JOIN fields f"
            " ON f.id = fv.field_id WHERE f.name = ? GROUP BY fv.value", (axis.field,))}
    elif axis.milestone:
        rank = {row[0]: row[1] for row in ctx.conn.execute(
            "SELECT name, MIN(sort_key) FROM milestones GROUP BY name")}
    return sorted(labels, key=lambda label: (label != "", rank.get(label, 0), label.lower(),
                                             label))
