"""The target database as the import writes it: names to ids, and the
objects a bug needs (accounts, products, components, versions, milestones,
values, keywords, groups, flag types) found or made.

The import writes below the domain code on purpose: the domain's changes of
bugs are what later raise notifications (mail, webhooks), and imported data
is history that already happened, so none of it goes through them. What
is written here is what the source showed, as it stands, in the same tables
the domain reads.

An object a bug names but the source's catalogue did not list (a product
the key may not search, yet a bug in it is visible to the key; a flag type
no visible component has) is made from what the bug tells of it, and the
report says so.
"""

from ..accounts.membership import (
    GRANT_DIRECT,
    grant_admin_visibility,
    refresh_derived,
    refresh_for_user,
    regexp_matches,
)
from ..catalogue import bug_fields
from ..store.db import ids_written, placeholders


UNCLASSIFIED = "Unclassified"
# Standard select fields whose values live in field_values.
SELECT_FIELDS = tuple(field.name for field in bug_fields.SELECTS)
IMPORTED = "Imported from the source"


class Target:
    """Lookups and creation in the target, inside the caller's transaction.

    conn: the connection (its transaction is the caller's). report: the
    Report. now: the import's time in the database form (accounts made).
    admin_logins: accounts that keep the memberships they have (the
    administrator created with the database). accounts: what the source
    showed of accounts (importer.accounts.Accounts; None: nothing).
    refreshed: lower(login) of the accounts whose details this run has
    written already (shared by the run's Targets). tag_owner: the key's
    login, whose personal tags the source shows (None: unknown).
    local_links: forms.LocalLinks rewriting See Also links to the old
    installation's bugs (None: kept as they are). controls_unknown: ids of
    the products whose group controls the source did not show.
    """

    def __init__(self, conn, report, now, admin_logins=(), accounts=None, refreshed=None,
                 tag_owner=None, local_links=None, controls_unknown=()):
        self.conn = conn
        self.report = report
        self.now = now
        self.admin_logins = {login.lower() for login in admin_logins}
        self.accounts = accounts
        self.refreshed = set() if refreshed is None else refreshed
        self.tag_owner = tag_owner
        self.local_links = local_links
        self.controls_unknown = set(controls_unknown)
        self.users = {row[1].lower(): row[0]
                      for row in conn.execute("SELECT id, login FROM users")}
        self.groups = {}
        self.regexps = {}
        for group_id, name, pattern in conn.execute("SELECT id, name, user_regexp FROM groups"):
            self.groups[name.lower()] = group_id
            self.regexps[group_id] = pattern
        self.keywords = {row[1].lower(): row[0]
                         for row in conn.execute("SELECT id, name FROM keywords")}
        self.classifications = {row[1].lower(): row[0] for row in
                                conn.execute("SELECT id, name FROM classifications")}
        self.products = {row[1].lower(): row[0]
                         for row in conn.execute("SELECT id, name FROM products")}
        self.components = {(row[0], row[2].lower()): row[1] for row in
                           conn.execute("SELECT product_id, id, name FROM components")}
        self.versions = {(row[0], row[1]) for row in
                         conn.execute("SELECT product_id, name FROM versions")}
        self.milestones = {(row[0], row[1]) for row in
                           conn.execute("SELECT product_id, name FROM milestones")}
        self.fields = {row["name"]: dict(row) for row in conn.execute(
            "SELECT id, name, type, is_custom FROM fields")}
        self.values = {}
        for field_id, value in conn.execute("SELECT field_id, value FROM field_values"):
            self.values.setdefault(field_id, set()).add(value)
        self.flag_types = {row[0]: (row[1], row[2]) for row in
                           conn.execute("SELECT id, name, target_type FROM flag_types")}

    # Accounts ------------------------------------------------------------------

    def user_id(self, login):
        """The target account of source login `login`, made when new; its
        details and memberships written (once a run) when the source
        described it."""
        key = login.lower()
        user_id = self.users.get(key)
        details = self.accounts.get(login) if self.accounts is not None else None
        if user_id is None:
            real_name = (details or {}).get("real_name")
            if real_name is None and self.accounts is not None:
                real_name = self.accounts.names.get(key)
            cur = self.conn.execute(
                "INSERT INTO users (login, real_name, password_hash, disabled_text,"
                " email_enabled, created_at) VALUES (?, ?, NULL, ?, ?, ?)",
                (login, real_name or "", _disabled_text(details or {}),
                 _email_enabled(details or {}), self.now))
            user_id = self.users[key] = cur.lastrowid
            self.report.count("accounts")
            if "@" not in login:
                self.report.not_carried("account addresses", login,
                                        "the source shows no e-mail address (the account is "
                                        "kept by its name and cannot get a reset mail)")
            refresh_for_user(self.conn, user_id)
            if details:
                self.refreshed.add(key)
                self._write_groups(user_id, login, details)
        elif details and key not in self.refreshed:
            self.refresh_user(login, details)
        return user_id

    def refresh_user(self, login, details):
        """Write what the source now shows of an account that exists."""
        key = login.lower()
        user_id = self.users[key]
        self.refreshed.add(key)
        if key not in self.admin_logins:
            self.conn.execute("UPDATE users SET real_name = ?, disabled_text = ?,"
                              " email_enabled = ? WHERE id = ?",
                              (details.get("real_name") or "", _disabled_text(details),
                               _email_enabled(details), user_id))
        else:
            self.conn.execute("UPDATE users SET real_name = ? WHERE id = ?",
                              (details.get("real_name") or "", user_id))
        self._write_groups(user_id, login, details)

    def _write_groups(self, user_id, login, details):
        """Memberships as the source shows them. One that the group's
        regular expression (as the source showed it) grants is left to it
        (a regexp grant, which a later change of the expression takes away,
        as at the source), and so is one that another of the account's
        groups gives through the groups' inheritance (a derived membership);
        the others are direct. In the groups whose members the source shows
        (details["seen"], None: all), a direct membership it does not show
        is removed."""
        names = details.get("groups")
        if names is None:
            return
        wanted, regexp_ids = set(), set()
        from_source = self.accounts.regexp_groups if self.accounts is not None else set()
        for name in names:
            group_id = self.group_id(name, create=True)
            pattern = self.regexps.get(group_id, "")
            if name.lower() in from_source and regexp_matches(pattern, login):
                regexp_ids.add(group_id)
                continue
            wanted.add(group_id)
        derived = wanted - self._direct_of(wanted, regexp_ids)
        wanted -= derived
        self.report.count("group memberships", len(set(names)))
        if regexp_ids:
            self.report.count("memberships granted by a regexp", len(regexp_ids))
        if derived:
            self.report.count("memberships derived from another group", len(derived))
        have = {row[0] for row in self.conn.execute(
            "SELECT group_id FROM user_groups WHERE user_id = ? AND is_bless = 0"
            " AND grant_type = ?", (user_id, GRANT_DIRECT))}
        for group_id in sorted(wanted - have):
            self.conn.execute("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                              " VALUES (?, ?, 0, ?)", (user_id, group_id, GRANT_DIRECT))
        seen = details.get("seen")
        names_of = {group_id: name for name, group_id in self.groups.items()}
        gone = [] if login.lower() in self.admin_logins else sorted(
            group_id for group_id in have - wanted
            if seen is None or names_of.get(group_id) in seen)
        if gone:
            self.conn.execute(
                "DELETE FROM user_groups WHERE user_id = ? AND is_bless = 0 AND grant_type = ?"
                f" AND group_id IN ({placeholders(gone)})", [user_id, GRANT_DIRECT] + gone)
        if gone or wanted - have:
            refresh_derived(self.conn, [user_id])

    def _direct_of(self, shown, regexp_ids):
        """The groups of `shown` (ids) to keep as direct memberships: those
        that neither the others nor the groups of `regexp_ids` give through
        the target's group inheritance. Groups that give each other
        (a loop) keep the first of them, by id, direct."""
        grants = {}
        for member_id, grantor_id in self.conn.execute(
                "SELECT member_id, grantor_id FROM group_group_map"):
            grants.setdefault(member_id, set()).add(grantor_id)
        if not grants:
            return set(shown)

        def reach(start):
            reached, waiting = set(), list(start)
            while waiting:
                for grantor_id in grants.get(waiting.pop(), ()):
                    if grantor_id not in reached:
                        reached.add(grantor_id)
                        waiting.append(grantor_id)
            return reached

        kept = {group_id for group_id in shown
                if group_id not in reach((set(shown) | regexp_ids) - {group_id})}
        while True:
            left = set(shown) - kept - reach(kept | regexp_ids)
            if not left:
                return kept
            kept.add(min(left))

    # Groups ----------------------------------------------------------------------

    def group_id(self, name, create=True, description=None):
        """The target group called `name` (any case); a bug group made when
        new and `create`."""
        group_id = self.groups.get(name.lower())
        if group_id is None and create:
            cur = self.conn.execute(
                "INSERT INTO groups (name, description, is_bug_group, user_regexp, is_active,"
                " icon_url) VALUES (?, ?, 1, '', 1, '')", (name, description or IMPORTED))
            group_id = self.groups[name.lower()] = cur.lastrowid
            self.regexps[group_id] = ""
            self.report.count("groups")
            # The admin group sees its members, as the target's every group.
            # It is not made a member (nor a blesser) of it, as a group made
            # by Group.create is: who is a member, and through which groups,
            # is the source's, whose inheritance carry_group_grants brings
            # (the admin group's among it, where the source still has it).
            grant_admin_visibility(self.conn, [group_id])
        return group_id

    # Products and what belongs to them -------------------------------------------

    def classification_id(self, name):
        name = name or UNCLASSIFIED
        found = self.classifications.get(name.lower())
        if found is None:
            cur = self.conn.execute("INSERT INTO classifications (name, description, sort_key)"
                                    " VALUES (?, '', 0)", (name,))
            found = self.classifications[name.lower()] = cur.lastrowid
            self.report.count("classifications")
        return found

    def product_id(self, name, classification=None):
        """The product called `name`; made from a bug when the catalogue did
        not list it."""
        found = self.products.get(name.lower())
        if found is None:
            cur = self.conn.execute(
                "INSERT INTO products (name, classification_id, description, is_active,"
                " default_milestone, has_unconfirmed) VALUES (?, ?, ?, 1, '---', 1)",
                (name, self.classification_id(classification), IMPORTED))
            found = self.products[name.lower()] = cur.lastrowid
            self.report.count("products")
            self.report.not_carried("product details", name,
                                    "the key may not see the product, only bugs in it: it is "
                                    "made from its bugs")
        return found

    def component_id(self, product_id, name, default_assignee=None):
        found = self.components.get((product_id, name.lower()))
        if found is None:
            owner = default_assignee or self._any_admin()
            cur = self.conn.execute(
                "INSERT INTO components (product_id, name, description, default_assignee,"
                " is_active) VALUES (?, ?, ?, ?, 1)", (product_id, name, IMPORTED, owner))
            found = self.components[(product_id, name.lower())] = cur.lastrowid
            self.report.count("components")
        return found

    def ensure_version(self, product_id, name):
        if (product_id, name) not in self.versions:
            self.conn.execute("INSERT INTO versions (product_id, name, sort_key, is_active)"
                              " VALUES (?, ?, 0, 1)", (product_id, name))
            self.versions.add((product_id, name))
            self.report.count("versions")

    def ensure_milestone(self, product_id, name):
        if (product_id, name) not in self.milestones:
            self.conn.execute("INSERT INTO milestones (product_id, name, sort_key, is_active)"
                              " VALUES (?, ?, 0, 1)", (product_id, name))
            self.milestones.add((product_id, name))
            self.report.count("milestones")

    def _any_admin(self):
        row = self.conn.execute(
            "SELECT MIN(ug.user_id) FROM user_groups ug JOIN groups g ON g.id = ug.group_id"
            " WHERE g.name = 'admin' AND ug.is_bless = 0").fetchone()
        if row[0] is None:
            row = self.conn.execute("SELECT MIN(id) FROM users").fetchone()
        return row[0]

    # Field values, keywords, flag types -------------------------------------------

    def ensure_value(self, field_name, value, sort_key=None, is_open=None):
        """A legal value of select field `field_name` (standard or custom)."""
        field = self.fields.get(field_name)
        if field is None or value is None:
            return
        known = self.values.setdefault(field["id"], set())
        if value in known:
            return
        if sort_key is None:
            sort_key = self.conn.execute("SELECT COALESCE(MAX(sort_key), 0) + 100 FROM"
                                         " field_values WHERE field_id = ?",
                                         (field["id"],)).fetchone()[0]
        if field_name == "bug_status" and is_open is None:
            is_open = 1
        self.conn.execute("INSERT INTO field_values (field_id, value, sort_key, is_active,"
                          " is_open) VALUES (?, ?, ?, 1, ?)",
                          (field["id"], value, sort_key,
                           None if field_name != "bug_status" else int(bool(is_open))))
        known.add(value)
        self.report.count("field values")

    def keyword_id(self, name, description=""):
        found = self.keywords.get(name.lower())
        if found is None:
            cur = self.conn.execute("INSERT INTO keywords (name, description, is_active)"
                                    " VALUES (?, ?, 1)", (name, description))
            found = self.keywords[name.lower()] = cur.lastrowid
            self.report.count("keywords")
        return found

    def ensure_flag_type(self, type_id, name, target_type):
        """Flag type `type_id` (kept from the source); when the catalogue did
        not show it, made inactive from what a flag tells (it then applies
        nowhere new)."""
        if type_id in self.flag_types:
            return type_id
        if type_id is None:
            for known_id, (known_name, known_target) in self.flag_types.items():
                if known_name == name and known_target == target_type:
                    return known_id
        if type_id is None:
            type_id = self.conn.execute(
                "INSERT INTO flag_types (name, description, target_type, is_active)"
                " VALUES (?, ?, ?, 0)", (name, name, target_type)).lastrowid
        else:
            self.conn.execute("INSERT INTO flag_types (id, name, description, target_type,"
                              " is_active) VALUES (?, ?, ?, ?, 0)",
                              (type_id, name, name, target_type))
            ids_written(self.conn, "flag_types")
        self.flag_types[type_id] = (name, target_type)
        self.report.count("flag types")
        self.report.not_carried("flag type details", name,
                                "no product the key may see offers it: made inactive from its "
                                "flags")
        return type_id

    def custom_field(self, name):
        field = self.fields.get(name)
        return field if field is not None and field["is_custom"] else None


def _disabled_text(details):
    if details.get("login_denied_text"):
        return str(details["login_denied_text"])
    if "can_login" in details and not details["can_login"]:
        return "Disabled at the source before the import."
    return ""


def _email_enabled(details):
    return 0 if details.get("email_enabled") is False else 1
