"""Small data builders for the catalogue tests: they write rows directly, so
each test sets up exactly the world it checks."""

from accounts import ADMIN


MANDATORY, DEFAULT, SHOWN, NA = 3, 2, 1, 0


def set_param(services, name, value):
    """Store instance parameter `name`."""
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE params SET value = ? WHERE name = ?", (value, name))


def add_bug_group(services, name, members=(), with_admins=True):
    """Create an active bug group; `members` (logins) and, by default, the
    administrator become members. Returns its id."""
    with services.db.transaction(write=True) as conn:
        group_id = conn.execute("INSERT INTO groups (name, description, is_bug_group, is_active)"
                                " VALUES (?, ?, 1, 1)", (name, f"{name} group")).lastrowid
        logins = list(members) + ([ADMIN] if with_admins else [])
        for login in logins:
            user_id = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                                   (login,)).fetchone()[0]
            conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                         " VALUES (?, ?, 0, 0)", (user_id, group_id))
    return group_id


def control(services, product_id, group_id, membercontrol, othercontrol, entry=0, canedit=0):
    """Set a group control row directly."""
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, ?, ?, ?, ?)",
                     (group_id, product_id, entry, membercontrol, othercontrol, canedit))


def add_product(services, name, components=("General",), versions=("1.0",),
                milestones=("---",), is_active=True):
    """Create a product with components (assigned to the admin), versions and
    milestones directly. Returns {"id", "components": {name: id}}."""
    with services.db.transaction(write=True) as conn:
        product_id = conn.execute(
            "INSERT INTO products (name, classification_id, description, is_active,"
            " default_milestone, has_unconfirmed) VALUES (?, 1, ?, ?, '---', 1)",
            (name, f"{name} description", int(is_active))).lastrowid
        admin_id = conn.execute("SELECT id FROM users WHERE login = ?", (ADMIN,)).fetchone()[0]
        component_ids = {}
        for component in components:
            component_ids[component] = conn.execute(
                "INSERT INTO components (product_id, name, description, default_assignee)"
                " VALUES (?, ?, ?, ?)", (product_id, component, f"{component} description",
                                         admin_id)).lastrowid
        for version in versions:
            conn.execute("INSERT INTO versions (product_id, name) VALUES (?, ?)",
                         (product_id, version))
        for position, milestone in enumerate(milestones):
            conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (?, ?, ?)",
                         (product_id, milestone, position * 10))
    return {"id": product_id, "components": component_ids}


def add_bug(services, product_id, component_id, version="unspecified", milestone="---"):
    """Insert a minimal bug reported by and assigned to the admin; returns its id."""
    with services.db.transaction(write=True) as conn:
        admin_id = conn.execute("SELECT id FROM users WHERE login = ?", (ADMIN,)).fetchone()[0]
        return conn.execute(
            "INSERT INTO bugs (product_id, component_id, version, target_milestone, summary,"
            " status, priority, severity, platform, op_sys, assigned_to, reporter,"
            " creation_time, last_change_time) VALUES (?, ?, ?, ?, 'A bug', 'CONFIRMED',"
            " 'Normal', 'normal', 'All', 'All', ?, ?, '2026-01-01 00:00:00',"
            " '2026-01-01 00:00:00')",
            (product_id, component_id, version, milestone, admin_id, admin_id)).lastrowid


def audit_rows(services, class_name):
    """(object_id, field, removed, added) of the audit log for one class."""
    return services.query("SELECT object_id, field, removed, added FROM audit_log WHERE class = ?"
                          " ORDER BY id", ("Bugzilla::" + class_name,))


# A product's own administrators and the flag types of several products -----------

PRODUCT_ADMIN, PRODUCT_ADMIN_PASSWORD = "team@example.com", "team-password-1"
FLAG_TYPES_BY_REACH = {
    # name: inclusions, exclusions (the API form)
    "mine": (["TestProduct"], []),
    "shared": (["TestProduct", "Other"], []),
    "everywhere": (["__Any__"], []),
    "elsewhere": (["Other"], []),
    "kept_out": (["__Any__"], ["TestProduct"]),
}


def product_admin_world(services, client, admin_key):
    """TestProduct, whose group controls give group Team editcomponents on
    it, and Other, which gives none; PRODUCT_ADMIN is in Team. The flag
    types of FLAG_TYPES_BY_REACH, made over REST by the administrator.
    Returns {type name: id}."""
    services.add_user(PRODUCT_ADMIN, password=PRODUCT_ADMIN_PASSWORD)
    add_bug_group(services, "Team", members=(PRODUCT_ADMIN,))
    add_product(services, "Other")
    key = {"X-BUGZILLA-API-KEY": admin_key}
    resp = client.simulate_put("/rest/product/TestProduct", headers=key, json={
        "group_controls": {"Team": {"membercontrol": "Shown", "othercontrol": "NA",
                                    "editcomponents": True}}})
    assert resp.status_code == 200, resp.text
    ids = {}
    for name, (inclusions, exclusions) in FLAG_TYPES_BY_REACH.items():
        made = client.simulate_post("/rest/flag_type", headers=key, json={
            "name": name, "description": f"The {name} type", "inclusions": inclusions,
            "exclusions": exclusions})
        assert made.status_code == 201, made.text
        ids[name] = made.json["id"]
    return ids
