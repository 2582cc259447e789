"""A bugsvc instance holding the data that python-bugzilla's released
integration tests (`tests/integration` of its 3.3.0 sdist) expect of their
Bugzilla test instance, built through bugsvc's own REST interface.

What those tests check, and so what must be here, with these ids:
- exactly three products: TestProduct (id 1, from the default installation),
  "Red Hat Enterprise Linux 9" (id 2; versions unspecified, 9.0 and 9.1) and
  "SUSE Linux Enterprise Server 15 SP6" (id 3; version unspecified);
- components python-bugzilla (id 2, in RHEL 9), Kernel and Containers (in
  SUSE), all owned by andreas@hasenkopf.xyz, the administrator;
- bug 1 "ZeroDivisionError in function foo_bar()" in SUSE/Containers with the
  alias FOO-1 and the whiteboard "AV:N/AC:L/PR:H/UI:N/S:U/C:L/I:N/A:L", the
  only bug of SUSE; bug 2 "Expect the Spanish inquisition", the only bug of
  RHEL 9/python-bugzilla.

The rest follows their instance of that release so that the data reads the
same: bug 1 went CONFIRMED -> IN_PROGRESS and has a second comment; the
administrator's real name is Andreas (and, as on any first start, it is the
`maintainer`). Their CI hands the tests the administrator's API key in a
bugzillarc; `write_bugzillarc` does the same.

The installation is a default one: no parameter is changed (their bug 1's
whiteboard is set over the API while `usestatuswhiteboard` is off, as
Bugzilla's API takes it).
"""

import sys

from live_server import ROOT, Server, api_key_for


RELEASE = "3.3.0"   # the python-bugzilla release whose test instance this is
OWNER = "andreas@hasenkopf.xyz"
OWNER_NAME = "Andreas"
OWNER_PASSWORD = "andreas-password-pbz"
RHEL = "Red Hat Enterprise Linux 9"
SUSE = "SUSE Linux Enterprise Server 15 SP6"

# (name, description, versions): created in this order, so ids 2 and 3.
PRODUCTS = (
    (RHEL, "Lorem ipsum", ("unspecified", "9.0", "9.1")),
    (SUSE, "Lorem ipsum dolor sit amet", ("unspecified",)),
)

# (product, name, description): created in this order after TestComponent
# (id 1), so python-bugzilla is id 2.
COMPONENTS = (
    (RHEL, "python-bugzilla", "Lorem ipsum dolor sit amet"),
    (SUSE, "Kernel", "Lorem ipsum"),
    (SUSE, "Containers", "Lorem ipsum"),
)

# Each bug: what it is filed with, the changes made to it afterwards, one
# call each, and the comments added after them. Filed in this order, so
# ids 1 and 2.
BUGS = (
    {
        "create": {"product": SUSE, "component": "Containers", "version": "unspecified",
                   "summary": "ZeroDivisionError in function foo_bar()", "severity": "major",
                   "priority": "---", "op_sys": "Linux", "platform": "PC", "status": "CONFIRMED",
                   "description": "Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed "
                                  "diam nonumy eirmod tempor invidunt ut labore et dolore magna "
                                  "aliquyam erat, sed diam voluptua.\n\nAt vero eos et accusam "
                                  "et justo duo dolores et ea rebum."},
        "updates": ({"status": "IN_PROGRESS"},
                    {"whiteboard": "AV:N/AC:L/PR:H/UI:N/S:U/C:L/I:N/A:L"},
                    {"alias": {"add": ["FOO-1"]}}),
        "comments": ("Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor "
                     "sit amet.",),
    },
    {
        "create": {"product": RHEL, "component": "python-bugzilla", "version": "9.1",
                   "summary": "Expect the Spanish inquisition", "severity": "enhancement",
                   "priority": "---", "op_sys": "Linux", "platform": "PC", "status": "CONFIRMED",
                   "description": "Nobody expects the Spanish Inquisition!\n\nOur chief weapon "
                                  "is surprise, surprise and fear, fear and surprise."},
        "updates": (),
        "comments": (),
    },
)


class Instance:
    """The running, seeded server and the administrator's API key."""

    def __init__(self, server, api_key):
        self.server = server
        self.url = server.url
        self.api_key = api_key

    def call(self, method, path, body=None, query=None):
        """The answer of one REST call as the administrator; fails on an error."""
        status, answer, _ = self.server.call(method, "/rest" + path,
                                             {**(query or {}), "Bugzilla_api_key": self.api_key},
                                             body)
        assert status in (200, 201), (method, path, body, status, answer)
        return answer

    def write_bugzillarc(self, home):
        """Give python-bugzilla the administrator's API key for this server, in
        `home`/.config/python-bugzilla/bugzillarc (section: host and port)."""
        directory = home / ".config" / "python-bugzilla"
        directory.mkdir(parents=True, exist_ok=True)
        host = self.url.split("://", 1)[1]
        (directory / "bugzillarc").write_text(f"[{host}]\napi_key = {self.api_key}\n")


def seed(instance):
    """Create the data of the module docstring; checks the ids the tests rely on."""
    call = instance.call
    call("PUT", f"/user/{OWNER}", {"full_name": OWNER_NAME})
    for name, description, versions in PRODUCTS:
        call("POST", "/product", {"name": name, "description": description,
                                  "version": versions[0]})
        for version in versions[1:]:
            call("POST", "/version", {"product": name, "name": version})
    for product, name, description in COMPONENTS:
        call("POST", "/component", {"product": product, "name": name,
                                    "description": description, "default_assignee": OWNER})
    for bug in BUGS:
        bug_id = call("POST", "/bug", bug["create"])["id"]
        for change in bug["updates"]:
            call("PUT", f"/bug/{bug_id}", change)
        for text in bug["comments"]:
            call("POST", f"/bug/{bug_id}/comment", {"comment": text})
    products = call("GET", "/product", query={
        "type": "accessible",
        "include_fields": "id,name,components.id,components.name"})["products"]
    ids = {product["name"]: product["id"] for product in products}
    assert ids == {"TestProduct": 1, RHEL: 2, SUSE: 3}, ids
    components = {(product["name"], c["name"]): c["id"] for product in products
                  for c in product["components"]}
    assert components[(RHEL, "python-bugzilla")] == 2, components
    bugs = call("GET", "/bug/1", query={"ids": 2, "include_fields": "id,summary"})["bugs"]
    assert [(b["id"], b["summary"]) for b in bugs] == [
        (1, BUGS[0]["create"]["summary"]), (2, BUGS[1]["create"]["summary"])], bugs


def seeded_instance(workdir):
    """Start `python bugsvc.py` on a free loopback port with a new database in
    `workdir` (the administrator: OWNER), seed it; returns the Instance.
    The caller stops `instance.server`."""
    db_path = workdir / "bugsvc.sqlite"
    server = Server([sys.executable, str(ROOT / "bugsvc.py")], db_path, workdir,
                    {"BUGSVC_ADMIN_EMAIL": OWNER, "BUGSVC_ADMIN_PASSWORD": OWNER_PASSWORD},
                    "pbz-instance")
    try:
        instance = Instance(server, api_key_for(db_path, OWNER))
        seed(instance)
    except BaseException:
        server.stop()
        raise
    return instance
