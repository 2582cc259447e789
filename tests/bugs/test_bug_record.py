"""A bug's stored state as bugs/record.py loads it (by one statement): every
list in its order, with the types the update and the history are made from,
on both engines."""

from accounts import ADMIN
from bug_support import add_custom_field, add_flag_type, add_keyword, file_bug, update_bug
from bugsvc.bugs import record


def test_a_record_holds_every_list_in_order_with_its_types(services, db):
    other, second = "cc-one@example.com", "cc-two@example.com"
    services.add_user(other)
    services.add_user(second)
    add_keyword(services, "zeta")
    add_keyword(services, "alpha")
    add_custom_field(services, "cf_os_list", 3, values=("mac", "linux", "bsd"))
    add_custom_field(services, "cf_build", 1)
    add_flag_type(services, "review")
    add_flag_type(services, "qa", sort_key=2)
    blocker, blocked = file_bug(services), file_bug(services)
    bug_id = file_bug(services, alias=["first", "second"], cc=[second, other],
                      keywords=["zeta", "alpha"], depends_on=[blocker], blocks=[blocked],
                      see_also=["https://bugzilla.mozilla.org/show_bug.cgi?id=2",
                                "https://bugzilla.mozilla.org/show_bug.cgi?id=1"],
                      cf_os_list=["linux", "mac"], cf_build="20261127",
                      whiteboard="[1] [ui]", estimated_time=2.5)
    update_bug(services, bug_id, flags=[{"name": "review", "status": "?", "requestee": other},
                                        {"name": "qa", "status": "+"}])
    with db.transaction() as conn:
        users = dict(conn.execute("SELECT login, id FROM users").fetchall())
        loaded = record.load(conn, bug_id)
        keywords = dict(conn.execute("SELECT name, id FROM keywords").fetchall())
    assert loaded.id == bug_id
    assert loaded.aliases == ["first", "second"]                       # the order given
    assert loaded.cc == sorted([users[other], users[second]])
    assert loaded.keywords == sorted([keywords["zeta"], keywords["alpha"]])
    assert (loaded.depends_on, loaded.blocks) == ([blocker], [blocked])
    assert loaded.see_also == ["https://bugzilla.mozilla.org/show_bug.cgi?id=2",
                              "https://bugzilla.mozilla.org/show_bug.cgi?id=1"]
    assert loaded.custom == {"cf_build": ["20261127"], "cf_os_list": ["linux", "mac"]}
    assert (loaded.whiteboard, loaded.estimated_time, loaded.is_confirmed) == ("[1] [ui]", 2.5,
                                                                               True)
    assert loaded.reporter == users[ADMIN] and isinstance(loaded.creation_time, str)
    flags = {flag["status"]: flag for flag in loaded.flags}
    assert [flag["id"] for flag in loaded.flags] == sorted(flag["id"] for flag in loaded.flags)
    assert flags["?"]["requestee_id"] == users[other] and flags["+"]["requestee_id"] is None
    assert all(isinstance(flag[key], int) for flag in loaded.flags
               for key in ("id", "type_id", "setter_id"))
    assert all(isinstance(flag["created_at"], str) for flag in loaded.flags)
    with db.transaction() as conn:
        plain = record.load(conn, blocker)
    assert (plain.aliases, plain.cc, plain.keywords, plain.groups, plain.depends_on,
            plain.see_also, plain.custom, plain.flags) == ([], [], [], [], [], [], {}, [])
    assert plain.blocks == [bug_id]
