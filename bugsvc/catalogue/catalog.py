"""Lookups of the catalogue (products, components, versions, milestones,
classifications, keywords) and of groups and users by name, shared by every
area. Each lookup returns a plain dict or None; it checks no permission.

Names are matched case-insensitively, as the unique indexes of schema.sql
are (lower(name)). named() and each_once() gather what a call names by ids
and names.
"""

from ..errors import OBJECT_DOES_NOT_EXIST, ServiceError
from ..store.db import placeholders


_INT64_LIMIT = 2**63       # ids beyond SQLite's integers name nothing

# Row to dict, one function per area -----------------------------------------

_PRODUCT_COLUMNS = ("id, name, classification_id, description, is_active, default_milestone,"
                    " has_unconfirmed")
_COMPONENT_COLUMNS = ("id, product_id, name, description, default_assignee, default_qa_contact,"
                      " is_active")
_VERSION_COLUMNS = "id, product_id, name, sort_key, is_active"
_MILESTONE_COLUMNS = "id, product_id, name, sort_key, is_active"
_CLASSIFICATION_COLUMNS = "id, name, description, sort_key"
_KEYWORD_COLUMNS = "id, name, description, is_active"
_GROUP_COLUMNS = "id, name, description, is_bug_group, user_regexp, is_active, icon_url"
_USER_COLUMNS = "id, login, real_name, disabled_text, email_enabled"


def product_dict(row):
    """{id, name, classification_id, description, is_active, default_milestone,
    has_unconfirmed} of a products row."""
    return {"id": row["id"], "name": row["name"], "classification_id": row["classification_id"],
            "description": row["description"], "is_active": bool(row["is_active"]),
            "default_milestone": row["default_milestone"],
            "has_unconfirmed": bool(row["has_unconfirmed"])}


def component_dict(row):
    """{id, product_id, name, description, default_assignee (user id),
    default_qa_contact (user id or None), is_active} of a components row."""
    return {"id": row["id"], "product_id": row["product_id"], "name": row["name"],
            "description": row["description"], "default_assignee": row["default_assignee"],
            "default_qa_contact": row["default_qa_contact"], "is_active": bool(row["is_active"])}


def version_dict(row):
    """{id, product_id, name, sort_key, is_active} of a versions row."""
    return {"id": row["id"], "product_id": row["product_id"], "name": row["name"],
            "sort_key": row["sort_key"], "is_active": bool(row["is_active"])}


def milestone_dict(row):
    """{id, product_id, name, sort_key, is_active} of a milestones row."""
    return {"id": row["id"], "product_id": row["product_id"], "name": row["name"],
            "sort_key": row["sort_key"], "is_active": bool(row["is_active"])}


def classification_dict(row):
    """{id, name, description, sort_key} of a classifications row."""
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "sort_key": row["sort_key"]}


def keyword_dict(row):
    """{id, name, description, is_active} of a keywords row."""
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "is_active": bool(row["is_active"])}


def group_dict(row):
    """{id, name, description, is_bug_group, user_regexp, is_active, icon_url}
    of a groups row."""
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "is_bug_group": bool(row["is_bug_group"]), "user_regexp": row["user_regexp"],
            "is_active": bool(row["is_active"]), "icon_url": row["icon_url"]}


def user_dict(row):
    """{id, login, real_name, disabled_text, email_enabled} of a users row."""
    return {"id": row["id"], "login": row["login"], "real_name": row["real_name"],
            "disabled_text": row["disabled_text"], "email_enabled": bool(row["email_enabled"])}


def _one(conn, sql, args, to_dict):
    row = conn.execute(sql, args).fetchone()
    return None if row is None else to_dict(row)


# Products ----------------------------------------------------------------------

def product_by_id(conn, product_id):
    """The product with id `product_id`, or None."""
    return _one(conn, f"SELECT {_PRODUCT_COLUMNS} FROM products WHERE id = ?", (product_id,),
                product_dict)


def product_by_name(conn, name):
    """The product called `name` (any case), or None."""
    return _one(conn, f"SELECT {_PRODUCT_COLUMNS} FROM products WHERE lower(name) = lower(?)",
                (name,), product_dict)


def product_by_id_or_name(conn, value):
    """The product named by `value`: an int id, or a name (a name made only
    of digits is read as an id, as in paths). None when unknown."""
    if isinstance(value, int) and not isinstance(value, bool):
        return product_by_id(conn, value) if abs(value) < _INT64_LIMIT else None
    text = str(value)
    if text.isdigit() and text.isascii():
        return product_by_id(conn, int(text)) if int(text) < _INT64_LIMIT else None
    return product_by_name(conn, text)


def products_by_ids(conn, product_ids):
    """{id: product} of the existing products among `product_ids`."""
    product_ids = list(product_ids)
    if not product_ids:
        return {}
    rows = conn.execute(f"SELECT {_PRODUCT_COLUMNS} FROM products"
                        f" WHERE id IN ({placeholders(product_ids)})",
                        product_ids)
    return {row["id"]: product_dict(row) for row in rows}


# Components, versions, milestones -------------------------------------------

def component_by_id(conn, component_id):
    """The component with id `component_id`, or None."""
    return _one(conn, f"SELECT {_COMPONENT_COLUMNS} FROM components WHERE id = ?",
                (component_id,), component_dict)


def component_by_name(conn, product_id, name):
    """The component called `name` (any case) in product `product_id`, or None."""
    return _one(conn, f"SELECT {_COMPONENT_COLUMNS} FROM components"
                " WHERE product_id = ? AND lower(name) = lower(?)", (product_id, name),
                component_dict)


def components_of(conn, product_id):
    """The components of product `product_id`, by name."""
    rows = conn.execute(f"SELECT {_COMPONENT_COLUMNS} FROM components WHERE product_id = ?"
                        " ORDER BY lower(name), id", (product_id,))
    return [component_dict(row) for row in rows]


def version_by_id(conn, version_id):
    """The version with id `version_id`, or None."""
    return _one(conn, f"SELECT {_VERSION_COLUMNS} FROM versions WHERE id = ?", (version_id,),
                version_dict)


def version_by_name(conn, product_id, name):
    """The version called `name` (any case) of product `product_id`, or None."""
    return _one(conn, f"SELECT {_VERSION_COLUMNS} FROM versions"
                " WHERE product_id = ? AND lower(name) = lower(?)", (product_id, name),
                version_dict)


def versions_of(conn, product_id):
    """The versions of product `product_id`: by sort_key, then in version
    order (numbers compared as numbers: 1.9 before 1.10)."""
    rows = conn.execute(f"SELECT {_VERSION_COLUMNS} FROM versions WHERE product_id = ?",
                        (product_id,))
    return sorted((version_dict(row) for row in rows),
                  key=lambda v: (v["sort_key"], version_sort_key(v["name"]), v["id"]))


def milestone_by_id(conn, milestone_id):
    """The milestone with id `milestone_id`, or None."""
    return _one(conn, f"SELECT {_MILESTONE_COLUMNS} FROM milestones WHERE id = ?",
                (milestone_id,), milestone_dict)


def milestone_by_name(conn, product_id, name):
    """The milestone called `name` (any case) of product `product_id`, or None."""
    return _one(conn, f"SELECT {_MILESTONE_COLUMNS} FROM milestones"
                " WHERE product_id = ? AND lower(name) = lower(?)", (product_id, name),
                milestone_dict)


def milestones_of(conn, product_id):
    """The milestones of product `product_id`, by sort_key then name."""
    rows = conn.execute(f"SELECT {_MILESTONE_COLUMNS} FROM milestones WHERE product_id = ?"
                        " ORDER BY sort_key, lower(name), id", (product_id,))
    return [milestone_dict(row) for row in rows]


def version_sort_key(name):
    """A sort key that orders version names the way people read them: runs of
    digits compare as numbers, other text case-insensitively."""
    parts, number, text = [], "", ""
    for char in name:
        if char.isdigit() and char.isascii():
            if text:
                parts.append((1, 0, text.lower()))
                text = ""
            number += char
        else:
            if number:
                parts.append((0, int(number), ""))
                number = ""
            text += char
    if number:
        parts.append((0, int(number), ""))
    if text:
        parts.append((1, 0, text.lower()))
    return parts


# Classifications, keywords -----------------------------------------------------

def classification_by_id(conn, classification_id):
    """The classification with id `classification_id`, or None."""
    return _one(conn, f"SELECT {_CLASSIFICATION_COLUMNS} FROM classifications WHERE id = ?",
                (classification_id,), classification_dict)


def classification_by_name(conn, name):
    """The classification called `name` (any case), or None."""
    return _one(conn, f"SELECT {_CLASSIFICATION_COLUMNS} FROM classifications"
                " WHERE lower(name) = lower(?)", (name,), classification_dict)


def keyword_by_id(conn, keyword_id):
    """The keyword with id `keyword_id`, or None."""
    return _one(conn, f"SELECT {_KEYWORD_COLUMNS} FROM keywords WHERE id = ?", (keyword_id,),
                keyword_dict)


def keyword_by_name(conn, name):
    """The keyword called `name` (any case), or None."""
    return _one(conn, f"SELECT {_KEYWORD_COLUMNS} FROM keywords WHERE lower(name) = lower(?)",
                (name,), keyword_dict)


def all_keywords(conn):
    """Every keyword, by name."""
    rows = conn.execute(f"SELECT {_KEYWORD_COLUMNS} FROM keywords ORDER BY lower(name), id")
    return [keyword_dict(row) for row in rows]


# Groups, users -------------------------------------------------------------------

def group_by_id(conn, group_id):
    """The group with id `group_id`, or None."""
    return _one(conn, f"SELECT {_GROUP_COLUMNS} FROM groups WHERE id = ?", (group_id,),
                group_dict)


def group_by_name(conn, name):
    """The group called `name` (any case), or None."""
    return _one(conn, f"SELECT {_GROUP_COLUMNS} FROM groups WHERE lower(name) = lower(?)",
                (name,), group_dict)


def user_by_id(conn, user_id):
    """The account with id `user_id`, or None."""
    return _one(conn, f"SELECT {_USER_COLUMNS} FROM users WHERE id = ?", (user_id,), user_dict)


def user_by_login(conn, login):
    """The account whose login is `login` (any case, surrounding spaces
    ignored), or None."""
    if not isinstance(login, str) or not login.strip():
        return None
    return _one(conn, f"SELECT {_USER_COLUMNS} FROM users WHERE lower(login) = lower(?)",
                (login.strip(),), user_dict)


def logins_of(conn, user_ids):
    """{id: login} of the accounts among `user_ids`."""
    user_ids = [uid for uid in user_ids if uid is not None]
    if not user_ids:
        return {}
    return dict(conn.execute(f"SELECT id, login FROM users WHERE id IN ({placeholders(user_ids)})",
                             user_ids).fetchall())


# What a call names by ids and names ------------------------------------------------

def named(conn, ids, names, by_id, by_name, noun):
    """The objects `ids` and `names` name, found with by_id(conn, id) and
    by_name(conn, name), each once, in the order given.
    Errors: 51 an unknown id or name (the message names the `noun`)."""
    found = []
    for object_id in ids:
        found_one = by_id(conn, object_id)
        if found_one is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no {noun} with the id "
                                                      f"'{object_id}'.")
        found.append(found_one)
    for name in names:
        found_one = by_name(conn, name)
        if found_one is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no {noun} named '{name}'.")
        found.append(found_one)
    return each_once(found)


def each_once(items, key=lambda item: item["id"]):
    """`items` without repeats (by `key`, the id), in their order."""
    unique, seen = [], set()
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            unique.append(item)
    return unique
