"""Test data written straight into the tables: bugs, comments, groups,
keywords, attachments, history rows. Lets the comment, last-visit and search
tests control every column (times, privacy, kinds) without the bug services."""

from accounts import ADMIN


def _write(services, sql, args=()):
    with services.db.transaction(write=True) as conn:
        return conn.execute(sql, args).lastrowid


def user_id(services, login):
    return services.query("SELECT id FROM users WHERE lower(login) = lower(?)", (login,))[0][0]


def set_param(services, name, value):
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM params WHERE name = ?", (name,))
        conn.execute("INSERT INTO params (name, value) VALUES (?, ?)", (name, value))


def add_group(services, name, members=()):
    """A bug group with `members` (logins); returns its id."""
    group_id = _write(services, "INSERT INTO groups (name, description, is_bug_group, is_active)"
                                " VALUES (?, ?, 1, 1)", (name, f"The {name} group"))
    for login in members:
        _write(services, "INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                         " VALUES (?, ?, 0, 0)", (user_id(services, login), group_id))
    return group_id


def add_keyword(services, name):
    return _write(services, "INSERT INTO keywords (name, description) VALUES (?, ?)", (name, name))


def add_product(services, name, component="Widgets", owner=ADMIN, classification_id=1):
    """A product with one component, version 'unspecified' and milestone '---'."""
    product_id = _write(services, "INSERT INTO products (name, classification_id, description)"
                                  " VALUES (?, ?, ?)", (name, classification_id, name))
    _write(services, "INSERT INTO versions (product_id, name) VALUES (?, 'unspecified')",
           (product_id,))
    _write(services, "INSERT INTO milestones (product_id, name, sort_key) VALUES (?, '---', 0)",
           (product_id,))
    _write(services, "INSERT INTO components (product_id, name, description, default_assignee)"
                     " VALUES (?, ?, ?, ?)", (product_id, component, component,
                                              user_id(services, owner)))
    return product_id


def add_bug(services, summary="A bug", reporter=ADMIN, assigned_to=ADMIN, qa_contact=None,
            product="TestProduct", component=None, status="CONFIRMED", resolution="",
            priority="---", severity="normal", platform="All", op_sys="All",
            version="unspecified", target_milestone="---", whiteboard="", url="",
            created="2026-01-01 00:00:00", changed=None, deadline=None, estimated_time=0.0,
            remaining_time=0.0, groups=(), cc=(), keywords=(), aliases=(), description="",
            dupe_of=None, is_cc_accessible=1, is_creator_accessible=1):
    """Insert a bug with its description (comment 0); returns its id."""
    product_id = services.query("SELECT id FROM products WHERE name = ?", (product,))[0][0]
    if component is None:
        component_id = services.query("SELECT MIN(id) FROM components WHERE product_id = ?",
                                      (product_id,))[0][0]
    else:
        component_id = services.query("SELECT id FROM components WHERE product_id = ? AND name = ?",
                                      (product_id, component))[0][0]
    bug_id = _write(
        services,
        "INSERT INTO bugs (product_id, component_id, version, target_milestone, summary, status,"
        " resolution, is_confirmed, priority, severity, platform, op_sys, assigned_to, qa_contact,"
        " reporter, url, whiteboard, dupe_of, creation_time, last_change_time, deadline,"
        " estimated_time, remaining_time, is_cc_accessible, is_creator_accessible)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (product_id, component_id, version, target_milestone, summary, status, resolution,
         priority, severity, platform, op_sys, user_id(services, assigned_to),
         user_id(services, qa_contact) if qa_contact else None, user_id(services, reporter), url,
         whiteboard, dupe_of, created, changed or created, deadline, estimated_time,
         remaining_time, is_cc_accessible, is_creator_accessible))
    for name in groups:
        group_id = services.query("SELECT id FROM groups WHERE name = ?", (name,))[0][0]
        _write(services, "INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)",
               (bug_id, group_id))
    for login in cc:
        _write(services, "INSERT INTO bug_cc (bug_id, user_id) VALUES (?, ?)",
               (bug_id, user_id(services, login)))
    for name in keywords:
        keyword_id = services.query("SELECT id FROM keywords WHERE name = ?", (name,))[0][0]
        _write(services, "INSERT INTO bug_keywords (bug_id, keyword_id) VALUES (?, ?)",
               (bug_id, keyword_id))
    for alias in aliases:
        _write(services, "INSERT INTO bug_aliases (alias, bug_id) VALUES (?, ?)", (alias, bug_id))
    add_comment(services, bug_id, reporter, description, when=created)
    return bug_id


def add_comment(services, bug_id, author, body, when="2026-01-02 00:00:00", is_private=False,
                kind=0, extra=None, attachment_id=None, work_time=0.0):
    """Insert the bug's next comment; returns its id."""
    count = services.query("SELECT COALESCE(MAX(count) + 1, 0) FROM comments WHERE bug_id = ?",
                           (bug_id,))[0][0]
    return _write(services,
                  "INSERT INTO comments (bug_id, count, author_id, created_at, body, is_private,"
                  " work_time, kind, extra, attachment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (bug_id, count, user_id(services, author), when, body, int(is_private),
                   work_time, kind, extra, attachment_id))


def add_attachment(services, bug_id, summary, creator=ADMIN, is_private=False,
                   file_name="file.txt", content_type="text/plain", data=b"data", is_patch=False):
    attachment_id = _write(
        services,
        "INSERT INTO attachments (bug_id, creator_id, created_at, last_change_time, summary,"
        " file_name, content_type, is_patch, is_private, size) VALUES (?, ?, '2026-01-02 00:00:00',"
        " '2026-01-02 00:00:00', ?, ?, ?, ?, ?, ?)",
        (bug_id, user_id(services, creator), summary, file_name, content_type, int(is_patch),
         int(is_private), len(data)))
    _write(services, "INSERT INTO attachment_data (attachment_id, data) VALUES (?, ?)",
           (attachment_id, data))
    return attachment_id


def add_history(services, bug_id, who, when, field, removed, added):
    return _write(services, "INSERT INTO bug_activity (bug_id, who, changed_at, field, removed,"
                            " added) VALUES (?, ?, ?, ?, ?, ?)",
                  (bug_id, user_id(services, who), when, field, removed, added))


def add_tag(services, comment_id, tag):
    _write(services, "INSERT INTO comment_tags (comment_id, tag) VALUES (?, ?)", (comment_id, tag))


def add_custom_field(services, name, field_type):
    return _write(services, "INSERT INTO fields (name, display_name, type, is_custom) VALUES"
                            " (?, ?, ?, 1)", (name, name, field_type))


def set_custom_value(services, bug_id, field_id, *values):
    for value in values:
        _write(services, "INSERT INTO bug_custom_values (bug_id, field_id, value) VALUES (?, ?, ?)",
               (bug_id, field_id, value))


def add_flag(services, bug_id, type_name, status, setter=ADMIN, requestee=None):
    found = services.query("SELECT id FROM flag_types WHERE name = ?", (type_name,))
    type_id = found[0][0] if found else _write(
        services, "INSERT INTO flag_types (name, description) VALUES (?, ?)",
        (type_name, type_name))
    return _write(services, "INSERT INTO flags (type_id, status, bug_id, setter_id, requestee_id,"
                            " created_at, modified_at) VALUES (?, ?, ?, ?, ?,"
                            " '2026-01-03 00:00:00', '2026-01-03 00:00:00')",
                  (type_id, status, bug_id, user_id(services, setter),
                   user_id(services, requestee) if requestee else None))


def add_personal_tag(services, login, name, *bug_ids):
    tag_id = _write(services, "INSERT INTO personal_tags (user_id, name) VALUES (?, ?)",
                    (user_id(services, login), name))
    for bug_id in bug_ids:
        _write(services, "INSERT INTO bug_tags (bug_id, tag_id) VALUES (?, ?)", (bug_id, tag_id))


def add_dependency(services, blocked, depends_on):
    _write(services, "INSERT INTO dependencies (blocked, depends_on) VALUES (?, ?)",
           (blocked, depends_on))


SEARCH_USERS = ("alice@example.com", "bob@example.com", "carol@example.com", "dave@example.com",
                "eve@example.com", "insider@example.com")


def search_world(services):
    """Six bugs with varied fields for the search tests; returns their ids by name.

    crash:   TestProduct, CONFIRMED, High/critical, PC/Linux, alice reports, bob is
             assigned, carol QA, dave CC; keywords crash+regression; alias ffcrash
    button:  Gadget/Widgets, RESOLVED FIXED, Low/minor, Macintosh/Mac OS, bob reports,
             alice assigned; keyword perf
    printing: TestProduct, UNCONFIRMED, dave reports, bob assigned; keyword crash;
             depends on crash
    secret:  restricted to group 'secret' (insider only), summary mentions crash
    dupe:    Gadget, RESOLVED DUPLICATE of button, eve reports
    verified: TestProduct, VERIFIED WONTFIX, eve reports and is assigned
    """
    for login in SEARCH_USERS:
        services.add_user(login, real_name=login.split("@")[0].title())
    add_group(services, "secret", members=["insider@example.com"])
    add_group(services, "insiders", members=["insider@example.com"])
    set_param(services, "insidergroup", "insiders")
    add_product(services, "Gadget", component="Widgets")
    for name in ("crash", "regression", "perf"):
        add_keyword(services, name)
    bugs = {}
    bugs["crash"] = add_bug(
        services, summary="Firefox crashes on startup", reporter="alice@example.com",
        assigned_to="bob@example.com", qa_contact="carol@example.com", cc=["dave@example.com"],
        priority="High", severity="critical", platform="PC", op_sys="Linux",
        keywords=["crash", "regression"], whiteboard="[needs-test] triaged",
        url="http://example.com/crash", aliases=["ffcrash"], created="2026-01-01 10:00:00",
        changed="2026-01-10 10:00:00", description="Start it and it dies.",
        deadline="2026-03-01", estimated_time=8.0, remaining_time=5.0)
    bugs["button"] = add_bug(
        services, summary="Button too small", product="Gadget", status="RESOLVED",
        resolution="FIXED", priority="Low", severity="minor", platform="Macintosh",
        op_sys="Mac OS", reporter="bob@example.com", assigned_to="alice@example.com",
        keywords=["perf"], created="2026-01-05 10:00:00", changed="2026-02-01 10:00:00",
        description="The OK button is tiny.")
    bugs["printing"] = add_bug(
        services, summary="Crash when printing", status="UNCONFIRMED", reporter="dave@example.com",
        assigned_to="bob@example.com", keywords=["crash"], created="2026-02-01 10:00:00",
        changed="2026-02-02 10:00:00", description="Printing a page crashes.")
    bugs["secret"] = add_bug(
        services, summary="Secret crash in the vault", groups=["secret"],
        reporter="insider@example.com", assigned_to="insider@example.com",
        created="2026-02-03 10:00:00", description="Classified.")
    bugs["dupe"] = add_bug(
        services, summary="Tiny button", product="Gadget", status="RESOLVED",
        resolution="DUPLICATE", dupe_of=bugs["button"], reporter="eve@example.com",
        created="2026-02-04 10:00:00", description="Same as the button bug.")
    bugs["verified"] = add_bug(
        services, summary="Old layout glitch", status="VERIFIED", resolution="WONTFIX",
        reporter="eve@example.com", assigned_to="eve@example.com",
        created="2025-12-01 10:00:00", changed="2025-12-02 10:00:00")
    add_comment(services, bugs["crash"], "bob@example.com", "The stack trace mentions nsFoo.",
                when="2026-01-02 10:00:00")
    add_comment(services, bugs["crash"], "carol@example.com", "Works for me on Windows.",
                when="2026-01-03 10:00:00")
    add_comment(services, bugs["crash"], "insider@example.com", "Internal token xyzzy.",
                when="2026-01-04 10:00:00", is_private=True)
    add_comment(services, bugs["printing"], "carol@example.com", "Printing fails for PDF.",
                when="2026-02-02 10:00:00")
    add_dependency(services, bugs["printing"], bugs["crash"])
    add_dependency(services, bugs["crash"], bugs["secret"])
    return bugs
