"""Which accounts the source shows, and what of each: real name, whether
it may log in, and its group memberships as far as the key may see them.

Every account the key may list is carried, not only those on bugs
(administrators, managers and people who only read appear on none): the
source's accounts are listed with User.get's `match` (Source.account_list)
and the members of each group the key may see (Group.get `membership`),
then each page of bugs asks for the accounts it names that were not
described yet (an account made since the listing).

How much of an account's memberships the source shows, `seen`: all of
them for the key's own account and to an editusers key (None); otherwise
only the groups whose member lists the key may read (a set of lowercase
names; User.get shows a blesser the groups it may bless). Memberships in
the groups seen are made exactly as shown; in other groups the target's
are left as they are.

Each page reads the accounts it needs itself, even when a page read at the
same time asks for the same one: a page is never written with an account
half known (two pages reading at once could otherwise write an account
from the name a bug shows while its memberships were still being read for
the other page, and the account then kept no membership).
"""

import threading

from . import forms


class Accounts:
    """What the source showed of accounts during one run (thread-safe).

    source: the Source. key_login: the key's account at the source (None
    when unknown).
    """

    def __init__(self, source, key_login):
        self.source = source
        self.key_login = key_login
        self.details = {}           # lower(login) -> details (see describe)
        self.refused = set()        # lower(login) the source would not describe
        self.names = {}             # lower(login) -> real name a bug showed
        self.key_groups = set()     # lower(group names) of the key's account
        self.seen_groups = set()    # lower(group names) whose members the key may read
        self.regexp_groups = set()  # lower(group names) whose user_regexp the source showed
        self.listed = None          # the AccountList of the run, once read
        self._lock = threading.Lock()

    @property
    def editusers(self):
        return "editusers" in self.key_groups

    def read_key_account(self):
        """The key's own account first: its groups say what else the key may see."""
        if self.key_login:
            self.read([self.key_login])
            found = self.get(self.key_login)
            if found:
                self.key_groups = {name.lower() for name in found["groups"] or []}

    def list_all(self, cap, groups):
        """Every account the key may list (AccountList), with the members of
        `groups` (Group.get's answer, with `membership` when the key is no
        editusers member). Returns the AccountList."""
        self.regexp_groups = {str(group["name"]).lower() for group in groups
                              if "user_regexp" in group}
        listed = self.source.account_list(cap)
        members = {}
        if not self.editusers:
            for group in groups:
                if "membership" not in group:
                    continue
                self.seen_groups.add(str(group["name"]).lower())
                for user in group["membership"] or []:
                    login = str(user.get("name") or "")
                    if login:
                        members.setdefault(login.lower(), (user, set()))[1].add(group["name"])
        users = {str(user["name"]).lower(): user for user in listed.users if user.get("name")}
        for key, (user, _) in members.items():
            users.setdefault(key, user)
        with self._lock:
            for key, user in users.items():
                if "groups" not in user and key not in members:
                    shown = None                      # the source tells nothing of them
                else:
                    shown = {self._group_name(g) for g in user.get("groups") or []}
                    shown = sorted(shown | members.get(key, (None, set()))[1])
                self.details[key] = self.describe(user, shown, self._seen(user["name"]))
        self.listed = listed
        return listed

    def read(self, logins):
        """Describe the accounts `logins` not described yet (a page's own
        reading: see the module's docstring)."""
        with self._lock:
            wanted = sorted({login for login in logins if login
                             and login.lower() not in self.details
                             and login.lower() not in self.refused})
        if not wanted:
            return
        found, refused = self.source.users(wanted)
        described = {}
        for user in found:
            login = str(user.get("name") or "")
            if login:
                groups = user.get("groups")
                described[login.lower()] = self.describe(
                    user, None if groups is None else [self._group_name(g) for g in groups],
                    self._seen(login))
        with self._lock:
            self.details.update(described)
            for login in wanted:
                if login.lower() not in described:
                    self.refused.add(login.lower())
        return refused

    def _seen(self, login):
        if self.editusers or (self.key_login or "").lower() == login.lower():
            return None
        return set(self.seen_groups)

    @staticmethod
    def _group_name(group):
        return str(group["name"]) if isinstance(group, dict) else str(group)

    @staticmethod
    def describe(user, groups, seen):
        """An account's details: login, real_name, can_login, groups (names shown,
        None when the source shows none), seen, and email_enabled and
        login_denied_text when shown."""
        details = {"login": str(user.get("name") or ""), "real_name": user.get("real_name") or "",
                   "can_login": forms.truth(user.get("can_login", True)),
                   "groups": groups, "seen": seen}
        if "email_enabled" in user:
            details["email_enabled"] = forms.truth(user["email_enabled"])
        if user.get("login_denied_text"):
            details["login_denied_text"] = str(user["login_denied_text"])
        return details

    def get(self, login):
        """The details of `login`, None when the source described it not."""
        with self._lock:
            return self.details.get(login.lower())

    def name_from_bug(self, login, real_name):
        """The real name a bug shows for `login` (used only for an account
        the source will not describe)."""
        with self._lock:
            self.names.setdefault(login.lower(), real_name)

    def logins(self):
        """Every login described, as the source spells it."""
        with self._lock:
            return sorted(details["login"] for details in self.details.values())
