"""Who is calling: the logged-in account (or nobody) and its group rights."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Caller:
    """The account a call runs as; `id` None means logged out.

    group_ids/group_names: groups the account is a member of.
    bless_group_ids: groups whose membership it may grant, directly or as a
    member of a group with a bless grant on them (besides editusers, whose
    members may grant every group).
    sudoer_id/sudoer_login: while a member of bz_sudoers acts as this
    account on the pages (accounts/sudo.py), the real account; else None.
    """

    id: int | None = None
    login: str | None = None
    real_name: str = ""
    group_ids: frozenset = field(default_factory=frozenset)
    group_names: frozenset = field(default_factory=frozenset)
    bless_group_ids: frozenset = field(default_factory=frozenset)
    sudoer_id: int | None = None
    sudoer_login: str | None = None

    @property
    def is_logged_in(self):
        return self.id is not None

    def in_group(self, name):
        """True when the caller is a member of the group called `name`."""
        return name in self.group_names

    def in_group_id(self, group_id):
        """True when the caller is a member of group `group_id`."""
        return group_id in self.group_ids

    def can_bless(self, group_id):
        """True when the caller may grant or revoke membership of `group_id`."""
        return self.in_group("editusers") or group_id in self.bless_group_ids

    @property
    def can_bless_any(self):
        """True when the caller may grant at least one group."""
        return self.in_group("editusers") or bool(self.bless_group_ids)


ANONYMOUS = Caller()


def load_caller(conn, user_id):
    """Build the Caller for account `user_id` from the database (None if unknown)."""
    row = conn.execute("SELECT id, login, real_name FROM users WHERE id = ?", (user_id,)).fetchone()
    if row is None:
        return None
    members, names, bless = set(), set(), set()
    for group_id, name, is_bless in conn.execute(
            "SELECT g.id, g.name, ug.is_bless FROM user_groups ug"
            " JOIN groups g ON g.id = ug.group_id WHERE ug.user_id = ?", (user_id,)):
        if is_bless:
            bless.add(group_id)
        else:
            members.add(group_id)
            names.add(name)
    if members:
        # Groups the account's groups may bless (Bugzilla's bless grant).
        ids = sorted(members)
        bless.update(row[0] for row in conn.execute(
            "SELECT grantor_id FROM group_grants WHERE grant_type = 1 AND member_id IN"
            f" ({', '.join('?' for _ in ids)})", ids))
    return Caller(id=row["id"], login=row["login"], real_name=row["real_name"],
                  group_ids=frozenset(members), group_names=frozenset(names),
                  bless_group_ids=frozenset(bless))
