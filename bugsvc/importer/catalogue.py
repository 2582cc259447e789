"""Carrying the catalogue: parameters, select values and the status
workflow, keywords, custom fields, groups, classifications, products with
their components, versions and milestones (and group controls where the
source shows them), and flag types with where they apply.

Objects are matched by name (flag types by id, which the import keeps), so
a second run updates what the first made; nothing is deleted, since bugs
may still use it (but a product's group controls, when the source shows
them, become exactly the source's). On the first run, the default values
of the standard select fields that the source does not have are removed
(no bug uses them yet), so the target offers exactly the source's values.
"""

import re

from ..accounts.membership import refresh_derived, refresh_for_group
from ..catalogue import settings
from ..catalogue.group_control import CONTROL_VALUES
from ..store.db import ids_written, placeholders
from . import forms
from .target import IMPORTED, SELECT_FIELDS


# Parameters carried when the source shows them: those that shape what the
# data means or who may see it. Not carried: urlbase (the new address is
# the team's own), and whatever the target does not have.
CARRIED_PARAMETERS = (
    "insidergroup", "timetrackinggroup", "comment_taggers_group", "requirelogin",
    "usevisibilitygroups", "webservice_email_filter", "strict_isolation", "emailsuffix",
    "useclassification", "usetargetmilestone", "useqacontact", "usestatuswhiteboard",
    "use_see_also", "letsubmitterchoosemilestone", "letsubmitterchoosepriority",
    "musthavemilestoneonaccept", "noresolveonopenblockers", "commentonchange_resolution",
    "commentonduplicate", "duplicate_or_move_bug_status", "defaultopsys", "defaultplatform",
    "defaultpriority", "defaultseverity", "maxattachmentsize", "maxlocalattachment",
    "emailregexp", "emailregexpdesc", "password_complexity", "search_allow_no_criteria",
    "maintainer", "makeproductgroups",
)
# Parameters whose absence changes who sees what: the report says so.
_PRIVACY_PARAMETERS = ("insidergroup", "timetrackinggroup")
_CATALOGUE_SELECTS = ("product", "component", "classification")


def carry_parameters(target, parameters, report):
    """Store the carried parameters the source shows (after groups and
    values, which they may name)."""
    conn = target.conn
    for name in CARRIED_PARAMETERS:
        if name not in parameters or name not in settings.DEFINITIONS:
            continue
        try:
            value = settings.normalise(conn, name, parameters[name])
        except ValueError as exc:
            report.not_carried("parameters", name, f"the target refuses its value: {exc}")
            continue
        conn.execute("INSERT INTO params (name, value) VALUES (?, ?)"
                     " ON CONFLICT (name) DO UPDATE SET value = excluded.value", (name, value))
    for name in _PRIVACY_PARAMETERS:
        if name not in parameters:
            current = settings.load(conn)[name]
            keeps = (f"the target keeps '{current}'" if current
                     else "until then nobody sees what it guards")
            report.note(f"The source does not show the parameter '{name}' to the key (it "
                        f"needs tweakparams there): set it with `bugsvc parameters {name}=GROUP`;"
                        f" {keeps}.")


def carry_fields(target, fields, first_run, report):
    """Select values (with the status workflow), keywords and custom fields."""
    by_name = {field.get("name"): field for field in fields}
    for name in SELECT_FIELDS:
        field = by_name.get(name)
        if field is not None and field.get("values") is not None:
            _carry_select_values(target, name, field["values"], first_run)
    status = by_name.get("bug_status")
    if status is not None and status.get("values"):
        _carry_workflow(target, status["values"])
    keywords = by_name.get("keywords")
    for value in (keywords or {}).get("values") or []:
        keyword_id = target.keyword_id(value["name"], value.get("description") or "")
        target.conn.execute("UPDATE keywords SET description = ? WHERE id = ?",
                            (value.get("description") or "", keyword_id))
    customs = [field for field in fields if forms.truth(field.get("is_custom"))]
    for field in customs:
        _carry_custom_field(target, field)
    # Controls point at other fields: all custom fields exist by now.
    for field in customs:
        _carry_field_controls(target, field, by_name)
    report.count("fields", len(customs))


def _carry_select_values(target, name, values, first_run):
    conn = target.conn
    field = target.fields[name]
    for value in values:
        text = value.get("name")
        if text is None or (name == "bug_status" and text == ""):
            continue
        sort_key = int(value.get("sort_key", value.get("sortkey", 0)) or 0)
        is_open = forms.truth(value.get("is_open", True)) if name == "bug_status" else None
        target.ensure_value(name, text, sort_key, is_open)
        conn.execute("UPDATE field_values SET sort_key = ?, is_open = ?"
                     " WHERE field_id = ? AND value = ?",
                     (sort_key, None if is_open is None else int(is_open), field["id"], text))
        if "is_active" in value:
            conn.execute("UPDATE field_values SET is_active = ? WHERE field_id = ? AND value = ?",
                         (int(forms.truth(value["is_active"])), field["id"], text))
    if first_run:
        keep = [value.get("name") for value in values if value.get("name") is not None]
        if name == "resolution":
            keep.append("")
        unused = [row[0] for row in conn.execute(
            f"SELECT id FROM field_values WHERE field_id = ? AND value NOT IN"
            f" ({placeholders(keep)})", [field["id"]] + keep)] if keep else []
        if unused:
            marks = placeholders(unused)
            conn.execute(f"DELETE FROM status_workflow WHERE old_status_id IN ({marks})"
                         f" OR new_status_id IN ({marks})", unused + unused)
            conn.execute(f"DELETE FROM field_values WHERE id IN ({marks})", unused)
            target.values[field["id"]] = {row[0] for row in conn.execute(
                "SELECT value FROM field_values WHERE field_id = ?", (field["id"],))}


def _carry_workflow(target, statuses):
    """The status workflow exactly as the source shows it (`can_change_to`
    of each status; the status named '' is a new bug)."""
    conn = target.conn
    ids = {row[1]: row[0] for row in conn.execute(
        "SELECT v.id, v.value FROM field_values v JOIN fields f ON f.id = v.field_id"
        " WHERE f.name = 'bug_status'")}
    rows = set()
    for status in statuses:
        if status.get("can_change_to") is None:
            return                       # a source that does not show it: keep the target's
        old = None if status.get("name") in ("", None) else ids.get(status["name"])
        if status.get("name") and old is None:
            continue
        for change in status["can_change_to"]:
            new = ids.get(change.get("name"))
            if new is not None:
                rows.add((old, new, int(forms.truth(change.get("comment_required", False)))))
    conn.execute("DELETE FROM status_workflow")
    for old, new, comment in sorted(rows, key=lambda row: (row[0] or 0, row[1])):
        conn.execute("INSERT INTO status_workflow (old_status_id, new_status_id, require_comment)"
                     " VALUES (?, ?, ?)", (old, new, comment))


def _carry_custom_field(target, field):
    conn = target.conn
    name = field["name"]
    kind = int(field.get("type") or 0)
    known = target.fields.get(name)
    values = (field.get("display_name") or name, kind,
              int(forms.truth(field.get("is_mandatory"))),
              int(forms.truth(field.get("is_on_bug_entry"))))
    if known is None:
        sort_key = conn.execute("SELECT COALESCE(MAX(sort_key), 0) + 50 FROM fields").fetchone()[0]
        cur = conn.execute("INSERT INTO fields (name, display_name, type, is_custom, is_mandatory,"
                           " is_on_bug_entry, is_obsolete, sort_key)"
                           " VALUES (?, ?, ?, 1, ?, ?, 0, ?)",
                           (name,) + values + (sort_key,))
        target.fields[name] = {"id": cur.lastrowid, "name": name, "type": kind, "is_custom": 1}
    else:
        conn.execute("UPDATE fields SET display_name = ?, type = ?, is_mandatory = ?,"
                     " is_on_bug_entry = ? WHERE id = ?", values + (known["id"],))
        known["type"] = kind
    field_id = target.fields[name]["id"]
    if field.get("values") is not None:
        if not conn.execute("SELECT 1 FROM field_values WHERE field_id = ? AND value = '---'",
                            (field_id,)).fetchone() and kind in (2, 3):
            target.ensure_value(name, "---", 0)
        for value in field["values"]:
            text = value.get("name")
            if text is None:
                continue
            sort_key = int(value.get("sort_key", value.get("sortkey", 0)) or 0)
            target.ensure_value(name, text, sort_key)
            active = int(forms.truth(value.get("is_active", True)))
            conn.execute("UPDATE field_values SET sort_key = ?, is_active = ?"
                         " WHERE field_id = ? AND value = ?", (sort_key, active, field_id, text))


def _carry_field_controls(target, field, by_name):
    """Which value of which field shows the field (visibility), and which
    controls its values (value_field)."""
    conn = target.conn
    field_id = target.fields[field["name"]]["id"]
    controller = field.get("visibility_field")
    controller_row = target.fields.get(controller) if controller else None
    conn.execute("DELETE FROM field_visibility WHERE field_id = ?", (field_id,))
    conn.execute("UPDATE fields SET visibility_field_id = ? WHERE id = ?",
                 (controller_row["id"] if controller_row else None, field_id))
    if controller_row:
        for value in field.get("visibility_values") or []:
            value_id = _choice_id(target, controller_row, value)
            if value_id is not None:
                conn.execute("INSERT INTO field_visibility (field_id, value_id) VALUES (?, ?)"
                             " ON CONFLICT DO NOTHING", (field_id, value_id))
    value_field = field.get("value_field")
    value_row = target.fields.get(value_field) if value_field else None
    conn.execute("UPDATE fields SET value_field_id = ? WHERE id = ?",
                 (value_row["id"] if value_row else None, field_id))
    if value_row:
        for value in field.get("values") or []:
            shown_by = (value.get("visibility_values") or [None])[0]
            value_id = _choice_id(target, value_row, shown_by) if shown_by else None
            conn.execute("UPDATE field_values SET visibility_value_id = ?"
                         " WHERE field_id = ? AND value = ?", (value_id, field_id, value["name"]))


def _choice_id(target, field, name):
    conn = target.conn
    if field["name"] == "product":
        return target.products.get(str(name).lower())
    if field["name"] == "classification":
        return target.classifications.get(str(name).lower())
    if field["name"] == "component":
        row = conn.execute("SELECT MIN(id) FROM components WHERE lower(name) = lower(?)",
                           (name,)).fetchone()
        return row[0]
    row = conn.execute("SELECT id FROM field_values WHERE field_id = ? AND value = ?",
                       (field["id"], name)).fetchone()
    return row[0] if row else None


def carry_groups(target, groups):
    """Groups as far as the key may see them; {source id: target id}. A
    group's regular expression (shown to creategroups keys) comes along,
    and the memberships it grants are made again when it changed."""
    conn = target.conn
    mapping = {}
    for group in groups:
        name = group.get("name")
        if not name:
            continue
        group_id = target.group_id(name, create=True, description=group.get("description"))
        mapping[int(group["id"])] = group_id
        updates = {"description": group.get("description") or IMPORTED}
        if "is_active" in group:
            updates["is_active"] = int(forms.truth(group["is_active"]))
        row = conn.execute("SELECT is_bug_group FROM groups WHERE id = ?", (group_id,)).fetchone()
        if row[0]:
            conn.execute("UPDATE groups SET description = ? WHERE id = ?",
                         (updates["description"], group_id))
            if "is_active" in updates:
                conn.execute("UPDATE groups SET is_active = ? WHERE id = ?",
                             (updates["is_active"], group_id))
        if "user_regexp" in group:
            pattern = group.get("user_regexp") or ""
            try:
                re.compile(pattern, re.IGNORECASE)
            except (re.error, RecursionError, OverflowError):
                target.report.not_carried("group regular expressions", name,
                                          "the target cannot read it: its members are direct")
                pattern = ""
            if pattern != target.regexps.get(group_id, ""):
                conn.execute("UPDATE groups SET user_regexp = ? WHERE id = ?",
                             (pattern, group_id))
                target.regexps[group_id] = pattern
                refresh_for_group(conn, group_id)
    return mapping


def carry_products(target, products, source, report):
    """Classifications, products, components, versions and milestones;
    returns the flag types the components list:
    {type id: (type object, target_type, [(product id, component id)])}."""
    conn = target.conn
    classifications = {}
    for product in products:
        name = product.get("classification") or "Unclassified"
        if name.lower() not in classifications:
            classifications[name.lower()] = source.classification(name) if source else None
    for found in classifications.values():
        if found is None:
            continue
        class_id = target.classification_id(found["name"])
        conn.execute("UPDATE classifications SET description = ?, sort_key = ? WHERE id = ?",
                     (found.get("description") or "", int(found.get("sort_key") or 0), class_id))
    flag_types = {}
    for product in products:
        name = product["name"]
        known = name.lower() in target.products
        class_id = target.classification_id(product.get("classification") or "Unclassified")
        if not known:
            cur = conn.execute(
                "INSERT INTO products (name, classification_id, description, is_active,"
                " default_milestone, has_unconfirmed) VALUES (?, ?, ?, ?, ?, ?)",
                (name, class_id, product.get("description") or "",
                 int(forms.truth(product.get("is_active", True))),
                 product.get("default_milestone") or "---",
                 int(forms.truth(product.get("has_unconfirmed", True)))))
            target.products[name.lower()] = cur.lastrowid
            report.count("products")
        product_id = target.products[name.lower()]
        conn.execute("UPDATE products SET name = ?, classification_id = ?, description = ?,"
                     " is_active = ?, default_milestone = ?, has_unconfirmed = ? WHERE id = ?",
                     (name, class_id, product.get("description") or "",
                      int(forms.truth(product.get("is_active", True))),
                      product.get("default_milestone") or "---",
                      int(forms.truth(product.get("has_unconfirmed", True))), product_id))
        for version in product.get("versions") or []:
            target.ensure_version(product_id, version["name"])
            conn.execute("UPDATE versions SET sort_key = ?, is_active = ?"
                         " WHERE product_id = ? AND name = ?",
                         (int(version.get("sort_key") or 0),
                          int(forms.truth(version.get("is_active", True))), product_id,
                          version["name"]))
        for milestone in product.get("milestones") or []:
            target.ensure_milestone(product_id, milestone["name"])
            conn.execute("UPDATE milestones SET sort_key = ?, is_active = ?"
                         " WHERE product_id = ? AND name = ?",
                         (int(milestone.get("sort_key") or 0),
                          int(forms.truth(milestone.get("is_active", True))), product_id,
                          milestone["name"]))
        target.ensure_milestone(product_id, product.get("default_milestone") or "---")
        for component in product.get("components") or []:
            owner = component.get("default_assigned_to")
            owner_id = target.user_id(owner) if owner else None
            component_id = target.component_id(product_id, component["name"], owner_id)
            qa = component.get("default_qa_contact")
            conn.execute("UPDATE components SET name = ?, description = ?, default_assignee = ?,"
                         " default_qa_contact = ?, is_active = ? WHERE id = ?",
                         (component["name"], component.get("description") or "",
                          owner_id or target._any_admin(), target.user_id(qa) if qa else None,
                          int(forms.truth(component.get("is_active", True))), component_id))
            for target_type in ("bug", "attachment"):
                for flag_type in (component.get("flag_types") or {}).get(target_type) or []:
                    entry = flag_types.setdefault(int(flag_type["id"]),
                                                  (flag_type, target_type, []))
                    entry[2].append((product_id, component_id))
    return flag_types


def carry_group_controls(target, controls, unknown, report):
    """Group controls. controls: {product name: ({group name: control},
    [inactive group names])} for the products whose controls the source
    showed (Product.get's group_controls, or the administration pages):
    the target's become exactly those. unknown: names of products whose
    controls it did not show: the target allows at least the groups their
    bugs use (writer.py) and the report names each, to be set by hand."""
    conn = target.conn
    for product_name, (shown, inactive) in sorted(controls.items()):
        product_id = target.products.get(product_name.lower())
        if product_id is None:
            continue
        kept = set()
        for group_name, control in sorted(shown.items()):
            values = (int(forms.truth(control.get("entry"))),
                      control_value(control.get("membercontrol")),
                      control_value(control.get("othercontrol")),
                      int(forms.truth(control.get("canedit"))),
                      int(forms.truth(control.get("editcomponents"))),
                      int(forms.truth(control.get("editbugs"))),
                      int(forms.truth(control.get("canconfirm"))))
            if not any(values):
                continue                  # NA/NA and no box: no control at all
            group_id = target.group_id(group_name, create=True)
            kept.add(group_id)
            conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                         " othercontrol, canedit, editcomponents, editbugs, canconfirm)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                         " ON CONFLICT (group_id, product_id) DO UPDATE SET entry = excluded.entry,"
                         " membercontrol = excluded.membercontrol,"
                         " othercontrol = excluded.othercontrol, canedit = excluded.canedit,"
                         " editcomponents = excluded.editcomponents,"
                         " editbugs = excluded.editbugs, canconfirm = excluded.canconfirm",
                         (group_id, product_id) + values)
            report.count("group controls")
        inactive_ids = {target.groups.get(name.lower()) for name in inactive}
        for name in inactive:
            report.not_carried("group controls", f"{product_name}: {name}",
                               "the group is inactive at the source, whose page does not show "
                               "its controls: the target's are kept")
        stale = sorted(row[0] for row in conn.execute(
            "SELECT group_id FROM group_controls WHERE product_id = ?", (product_id,))
            if row[0] not in kept and row[0] not in inactive_ids)
        if stale:
            conn.execute(f"DELETE FROM group_controls WHERE product_id = ? AND group_id IN"
                         f" ({placeholders(stale)})", [product_id] + stale)
    for product_name in sorted(unknown):
        report.not_carried("group controls", product_name,
                           "the source does not show them to the key: set them by hand "
                           "(the import allows the groups the product's bugs use, Shown to "
                           "members)")


def carry_group_grants(target, grants, report):
    """Grants between groups. grants: {group name: {grant type: [names of
    the groups granting it]}} (0: their members are members of it; 1: they
    may bless it; 2: they see its members), as the source's group pages
    showed them: for each group and type shown, the target's become exactly
    those (a type not shown keeps the target's). Memberships derived through
    groups are computed again when those grants changed."""
    conn = target.conn
    inheritance_changed = False
    for group_name, shown in sorted(grants.items()):
        grantor_id = target.groups.get(group_name.lower())
        if grantor_id is None:
            continue
        for grant_type, names in sorted(shown.items()):
            wanted = set()
            for name in names:
                member_id = target.groups.get(name.lower())
                if member_id is None or member_id == grantor_id:
                    report.not_carried("group grants", f"{name} -> {group_name}",
                                       "the target has no such group" if member_id is None
                                       else "a group cannot grant itself")
                    continue
                wanted.add(member_id)
            if grant_type == 0:
                held = {row[0] for row in conn.execute(
                    "SELECT member_id FROM group_group_map WHERE grantor_id = ?", (grantor_id,))}
                gone, new = sorted(held - wanted), sorted(wanted - held)
                if gone:
                    conn.execute(f"DELETE FROM group_group_map WHERE grantor_id = ? AND member_id"
                                 f" IN ({placeholders(gone)})", [grantor_id] + gone)
                conn.executemany("INSERT INTO group_group_map (member_id, grantor_id)"
                                 " VALUES (?, ?)", [(member_id, grantor_id) for member_id in new])
                inheritance_changed |= bool(gone or new)
            else:
                held = {row[0] for row in conn.execute(
                    "SELECT member_id FROM group_grants WHERE grantor_id = ? AND grant_type = ?",
                    (grantor_id, grant_type))}
                gone, new = sorted(held - wanted), sorted(wanted - held)
                if gone:
                    conn.execute(f"DELETE FROM group_grants WHERE grantor_id = ? AND"
                                 f" grant_type = ? AND member_id IN ({placeholders(gone)})",
                                 [grantor_id, grant_type] + gone)
                conn.executemany("INSERT INTO group_grants (member_id, grantor_id, grant_type)"
                                 " VALUES (?, ?, ?)",
                                 [(member_id, grantor_id, grant_type) for member_id in new])
            report.count(_GRANT_KINDS[grant_type], len(wanted))
    if inheritance_changed:
        refresh_derived(conn)


_GRANT_KINDS = {0: "groups that are members of groups", 1: "group bless grants",
                2: "group visibility grants"}


def control_value(value):
    """A MemberControl or OtherControl as stored: 0 to 3 from a number or
    its name (NA, Shown, Default, Mandatory)."""
    if isinstance(value, str) and not value.strip().isdigit():
        for name, number in CONTROL_VALUES.items():
            if value.strip().lower() == name.lower():
                return number
        return 0
    number = int(value or 0)
    return number if 0 <= number <= 3 else 0


def carry_flag_types(target, flag_types, group_ids, report):
    """Flag types with the source's ids, and inclusions for exactly the
    (product, component) pairs where the source offers them: a whole
    product when every one of its components has the type."""
    conn = target.conn
    for type_id, (flag_type, target_type, places) in sorted(flag_types.items()):
        grant = _flag_group(flag_type, "grant_group", group_ids, report)
        request = _flag_group(flag_type, "request_group", group_ids, report)
        row = (flag_type.get("name") or f"flag{type_id}", flag_type.get("description") or "",
               flag_type.get("cc_list") or "", "a" if target_type == "attachment" else "b",
               int(forms.truth(flag_type.get("is_active", True))),
               int(forms.truth(flag_type.get("is_requestable", True))),
               int(forms.truth(flag_type.get("is_requesteeble", True))),
               int(forms.truth(flag_type.get("is_multiplicable", True))),
               int(flag_type.get("sort_key") or 1), grant, request)
        if type_id not in target.flag_types:
            report.count("flag types")
        conn.execute(
            "INSERT INTO flag_types (id, name, description, cc_list, target_type, is_active,"
            " is_requestable, is_requesteeble, is_multiplicable, sort_key, grant_group_id,"
            " request_group_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET name = excluded.name,"
            " description = excluded.description, cc_list = excluded.cc_list,"
            " target_type = excluded.target_type, is_active = excluded.is_active,"
            " is_requestable = excluded.is_requestable,"
            " is_requesteeble = excluded.is_requesteeble,"
            " is_multiplicable = excluded.is_multiplicable, sort_key = excluded.sort_key,"
            " grant_group_id = excluded.grant_group_id,"
            " request_group_id = excluded.request_group_id", (type_id,) + row)
        target.flag_types[type_id] = (row[0], row[3])
        ids_written(conn, "flag_types")
        conn.execute("DELETE FROM flag_inclusions WHERE type_id = ?", (type_id,))
        conn.execute("DELETE FROM flag_exclusions WHERE type_id = ?", (type_id,))
        by_product = {}
        for product_id, component_id in places:
            by_product.setdefault(product_id, set()).add(component_id)
        for product_id, component_ids in sorted(by_product.items()):
            every = {row[0] for row in conn.execute(
                "SELECT id FROM components WHERE product_id = ?", (product_id,))}
            if component_ids >= every:
                conn.execute("INSERT INTO flag_inclusions (type_id, product_id, component_id)"
                             " VALUES (?, ?, NULL)", (type_id, product_id))
                continue
            for component_id in sorted(component_ids):
                conn.execute("INSERT INTO flag_inclusions (type_id, product_id, component_id)"
                             " VALUES (?, ?, ?)", (type_id, product_id, component_id))


def _flag_group(flag_type, key, group_ids, report):
    """The target group of a flag type's grant or request group. A group the
    key may not see becomes `admin`: a type whose setters are unknown is
    kept to administrators rather than opened to everyone."""
    source_id = flag_type.get(key)
    if source_id in (None, "", 0):
        return None
    found = group_ids.get(int(source_id))
    if found is None:
        report.not_carried("flag type groups", f"{flag_type.get('name')} {key}",
                           "the key may not see the group: set to admin")
        return group_ids.get("admin")
    return found
