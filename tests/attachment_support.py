"""Builders and people for the attachment tests: accounts (a plain user, the
attacher, an insider), attaching files through the service, flag types."""

import base64
from datetime import datetime, timezone

import pytest

from bug_rows import ADMIN, add_bug, add_group, set_param
from bugsvc.accounts.membership import refresh_for_user
from bugsvc.errors import ServiceError
from bugsvc.services import attachment, flagtype


PLAIN = "plain@example.com"        # logged in, nothing special
ATTACHER = "attacher@example.com"  # attaches files, not an insider
INSIDER = "insider@example.com"    # member of the insidergroup
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)
T1 = datetime(2026, 3, 2, 9, 30, 0, tzinfo=timezone.utc)


def b64(data):
    return base64.b64encode(data).decode("ascii")


@pytest.fixture
def people(services):
    for login in (PLAIN, ATTACHER, INSIDER):
        services.add_user(login, real_name=login.split("@")[0].title())
    add_group(services, "insiders", members=[INSIDER])
    set_param(services, "insidergroup", "insiders")


@pytest.fixture
def bug(services, people):
    return add_bug(services, summary="Crash on start", reporter=PLAIN, description="It crashes.",
                   created="2026-01-01 10:00:00", aliases=["crash"])


def attach(services, bug_id, as_user=ATTACHER, now=T0, data=b"hello world", **fields):
    """Attach a file to `bug_id` through the service; returns the new id."""
    params = {"ids": [bug_id], "data": b64(data), "file_name": "log.txt",
              "summary": "The log", "content_type": "text/plain"}
    params.update(fields)
    return services.call(attachment.create, params, as_user=as_user, now=now)["ids"][0]


def get_one(services, attachment_id, as_user=INSIDER, **params):
    params["attachment_ids"] = [attachment_id]
    result = services.call(attachment.get, params, as_user=as_user, write=False)
    return result["attachments"][str(attachment_id)]


def listing(services, bug_id, as_user=None):
    result = services.call(attachment.get, {"ids": [bug_id]}, as_user=as_user, write=False)
    return result["bugs"][str(bug_id)]


def change(services, attachment_id, as_user=ATTACHER, now=T1, **params):
    """Update one attachment; returns its entry of the answer."""
    params.setdefault("ids", [attachment_id])
    return services.call(attachment.update, params, as_user=as_user, now=now)["attachments"][0]


def error_code(services, function, params, as_user=None):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def flag_type(services, name, target_type="attachment", **values):
    """A flag type for every product (as the administrator); returns its id."""
    values.update(name=name, description=f"{name} flag", target_type=target_type)
    return services.call(flagtype.create, values, as_user=ADMIN)["id"]


def editbugs_only_for_admin(services):
    """Take everyone but the administrator out of editbugs (by default its
    regexp '.*' makes every account a member)."""
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE groups SET user_regexp = '' WHERE name = 'editbugs'")
        conn.execute("DELETE FROM user_groups WHERE grant_type = 2 AND group_id ="
                     " (SELECT id FROM groups WHERE name = 'editbugs')")
        for (user_id,) in conn.execute("SELECT id FROM users").fetchall():
            refresh_for_user(conn, user_id)


def stored_state(services):
    """Everything an attachment call may write, to check that a failed call wrote nothing."""
    return [services.table(table)
            for table in ("attachments", "attachment_data", "flags", "comments", "bug_activity")
            ] + [services.query("SELECT id, last_change_time FROM bugs ORDER BY id")]
