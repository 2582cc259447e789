"""The home page: a visitor's own work (bugs assigned to it, reported by
it, flags requested of it, recent changes to bugs it follows), each a
search the bug list repeats; the static files every page links."""

import falcon

from ..http import etag_matches
from .base import Page, responder
from .site import url

# Columns of the home page's lists, and how many bugs each shows.
_COLUMNS = ("id", "summary", "status", "resolution", "product", "component", "priority",
            "severity", "last_change_time", "flags")
LIST_LIMIT = 25
# Each list is a search the bug list can run (with its query string).
MY_LISTS = (
    ("assigned", "Assigned to me", {"f1": "assigned_to", "o1": "equals", "v1": "%user%",
                                    "bug_status": "__open__", "order": "changeddate DESC"}),
    ("requests", "Flags requested of me", {"f1": "requestees.login_name", "o1": "equals",
                                           "v1": "%user%", "order": "changeddate DESC"}),
    ("reported", "Reported by me", {"f1": "reporter", "o1": "equals", "v1": "%user%",
                                    "bug_status": "__open__", "order": "changeddate DESC"}),
    ("following", "Recently changed bugs I follow (on their CC list)",
     {"f1": "cc", "o1": "equals", "v1": "%user%", "order": "changeddate DESC"}),
)
# What a visitor who is not signed in sees: the latest changes.
PUBLIC_LIST = ("recent", "Recently changed bugs", {"bug_status": "__open__",
                                                   "order": "changeddate DESC"})


class Home(Page):
    """GET / (for browsers) and /index.cgi: the visitor's own work."""

    @responder
    def on_get(self, call):
        if call.query.get("GoAheadAndLogIn"):
            call.redirect(url("/login", target=call.query.get("target") or "/"))
            return
        if call.query.get("logout"):
            call.redirect("/logout")
            return
        lists = MY_LISTS if call.token else (PUBLIC_LIST,)
        reads = []
        for _, _, search in lists:
            reads.append(("Bug.search",
                          dict(search, limit=LIST_LIMIT, include_fields=",".join(_COLUMNS))))
        results = call.read(*reads)
        if call.user is None and call.token is None and lists is MY_LISTS:
            lists = (PUBLIC_LIST,)
            results = call.read(*[("Bug.search", dict(PUBLIC_LIST[2], limit=LIST_LIMIT,
                                                      include_fields=",".join(_COLUMNS)))])
        sections = []
        for (key, heading, search), result in zip(lists, results):
            query = {k: v for k, v in search.items()}
            sections.append({"key": key, "heading": heading, "bugs": result["bugs"],
                             "more": url("/buglist.cgi", **query),
                             "limit": LIST_LIMIT})
        call.render("home.html", title="Home", sections=sections)


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
