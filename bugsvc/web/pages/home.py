"""The home page: a visitor's own work (bugs assigned to it, reported by
it, flags requested of it, recent changes to bugs it follows), each a
search the bug list repeats; the static files every page links."""

import falcon

from ..http import etag_matches
from .base import Page, responder
from .site import url


# Columns of the home page's lists, and how many bugs each shows.
_COLUMNS = ("id", "summary", "status", "resolution", "product", "component", "priority",
            "severity", "last_change_time", "is_open")
LIST_LIMIT = 25
# "Recently" changed bugs one follows: changed in this many days.
FOLLOW_DAYS = 30
# Each list is a search the bug list can run (with its query string).
MY_LISTS = (
    ("assigned", "Assigned to me", {"f1": "assigned_to", "o1": "equals", "v1": "%user%",
                                    "bug_status": "__open__", "order": "changeddate DESC"}),
    ("reported", "Reported by me", {"f1": "reporter", "o1": "equals", "v1": "%user%",
                                    "bug_status": "__open__", "order": "changeddate DESC"}),
    ("following", f"Bugs I follow (on their CC list) changed in the last {FOLLOW_DAYS} days",
     {"f1": "cc", "o1": "equals", "v1": "%user%", "chfieldfrom": f"-{FOLLOW_DAYS}d",
      "order": "changeddate DESC"}),
)
# What a visitor who is not signed in sees: the latest changes.
PUBLIC_LIST = ("recent", "Recently changed bugs", {"bug_status": "__open__",
                                                   "order": "changeddate DESC"})


def _search(search):
    return ("Bug.search", dict(search, limit=LIST_LIMIT, include_fields=",".join(_COLUMNS)))


class Home(Page):
    """GET / (for browsers) and /index.cgi: the visitor's own work: bugs
    assigned to it, the flags requested of it (Bug.flag_requests, as the
    reference's My Requests), bugs it reported, and recent changes to bugs
    it follows; for a visitor not signed in, the recently changed bugs."""

    @responder
    def on_get(self, call):
        if call.query.get("GoAheadAndLogIn"):
            call.redirect(url("/login", target=call.query.get("target") or "/"))
            return
        if call.query.get("logout"):
            call.redirect("/logout")
            return
        if call.token:
            results = call.read(*[_search(search) for _, _, search in MY_LISTS],
                                ("Bug.flag_requests", {"limit": LIST_LIMIT})) \
                if call.whoami() else None
        else:
            results = None
        if results is None:
            found = call.read(_search(PUBLIC_LIST[2]))[0]
            sections = [self._section(PUBLIC_LIST, found["bugs"])]
            call.render("home.html", title="Home", sections=sections, requests=None)
            return
        requests = results.pop()["requests"]
        sections = [self._section(entry, result["bugs"])
                    for entry, result in zip(MY_LISTS, results, strict=True)]
        call.render("home.html", title="Home", sections=sections,
                    requests=self._requests(call, requests), setup=self._setup(call))

    @staticmethod
    def _setup(call):
        """What an administrator of a fresh installation still has to set up
        (urlbase, mail, an insider group, flag types), each a (text, links)
        pair; only what the visitor's groups may change, only while undone."""
        groups = set(call.whoami()["groups"])
        steps = []
        if "tweakparams" in groups:
            values = call.read_one("Bugzilla.parameters", {})["parameters"]
            if not values.get("urlbase"):
                steps.append(("Set the address this installation is reached at (urlbase): "
                              "links in mail point there.",
                              [("Required settings", "/editparams.cgi?section=core")]))
            if values.get("mail_delivery_method") == "None":
                steps.append(("Set up mail: until then no bug mail, password reset or "
                              "sign-up mail leaves.",
                              [("Email settings", "/editparams.cgi?section=mta")]))
            if not values.get("insidergroup"):
                links = [("Choose the insider group", "/editparams.cgi?section=groupsecurity")]
                if "creategroups" in groups:
                    links.insert(0, ("Make a group", "/editgroups.cgi?action=add"))
                steps.append(("Make an insider group: its members see and write private "
                              "comments and attachments.", links))
        if "editcomponents" in groups and not call.read_one("FlagType.list_all",
                                                            {})["flagtypes"]:
            steps.append(("Create flag types, such as review or approval.",
                          [("New flag type", "/editflagtypes.cgi?action=enter&target_type=bug")]))
        return steps

    @staticmethod
    def _section(entry, bugs):
        key, heading, search = entry
        return {"key": key, "heading": heading, "bugs": bugs,
                "more": url("/buglist.cgi", **search), "limit": LIST_LIMIT}

    @staticmethod
    def _requests(call, requests):
        """The requests with their bugs' summaries and states."""
        if not requests:
            return []
        ids = list(dict.fromkeys(request["bug_id"] for request in requests))
        bugs = call.read_one("Bug.get", {"ids": ids, "permissive": True,
                                         "include_fields": "id,summary,status,resolution,"
                                                           "is_open"})["bugs"]
        by_id = {bug["id"]: bug for bug in bugs}
        return [dict(request, bug=by_id[request["bug_id"]]) for request in requests
                if request["bug_id"] in by_id]


class Static(Page):
    """GET /static/NAME: the style sheet and the script, under names that
    carry a hash of their content, kept by browsers for a year."""

    def on_get(self, req, resp, name):
        found = self.site.static.get(name)
        if found is None:
            raise falcon.HTTPNotFound()
        data, content_type, tag = found
        resp.set_header("Cache-Control", "public, max-age=31536000, immutable")
        resp.set_header("ETag", tag)
        resp.set_header("X-Content-Type-Options", "nosniff")
        if etag_matches(req.get_header("If-None-Match"), tag):
            resp.status = 304
            resp.content_type = None
            return
        resp.content_type = content_type
        resp.data = data
