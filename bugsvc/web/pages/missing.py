"""What a browser finds at an address that is no page here (a link to one of
Bugzilla's pages that bugsvc does not have, a mistyped address): a page in
the site's layout, with status 404, saying what serves the purpose here
when Bugzilla had such a page. Programs keep their answers: the REST and
RPC addresses and the static files never reach this page, and a request
that does not ask for HTML (curl's */*, a JSON client) gets the JSON error
object any unknown address gives it."""

import re

import falcon

from ..landing import wants_page
from .base import Page, responder
from .site import url


# Every address except the interface's and the static files' (a sink with
# this prefix is only asked when no page's route matched).
ADDRESSES = re.compile(r"^/(?!(?:rest|rest\.cgi)(?:/|$)|(?:xmlrpc|jsonrpc)\.cgi(?:/|$)|static/)")

# Bugzilla's pages that bugsvc does not have: what to use here instead.
# (text, address; "{id}" stands for the bug number the link named.)
INSTEAD = {
    "reports.cgi": ("Charts of bugs over time are on the charts page.", "/chart.cgi"),
    "colchange.cgi": ("Every bug list has “Change columns” below it.", "/query.cgi"),
    "describecomponents.cgi": ("The new-bug page lists each product's components.",
                               "/enter_bug.cgi"),
    "describekeywords.cgi": ("Search for bugs by keyword on the search page.", "/query.cgi"),
    "votes.cgi": ("Votes are not part of this tracker.", "/"),
    "sanitycheck.cgi": ("The tracker keeps its data consistent itself; there is nothing to "
                        "check by hand.", "/admin.cgi"),
    "editclassifications.cgi": ("Classifications are managed over the REST interface "
                                "(classification).", "/rest/docs"),
}


class Missing(Page):
    """The sink for every address no page answers: the not-found page for
    browsers, the JSON error object for programs."""

    def __call__(self, req, resp, **_):
        if not wants_page(req):
            raise falcon.HTTPNotFound()
        self._answer(req, resp)

    @responder
    def _answer(self, call):
        not_found(call)


def not_found(call, what=None):
    """Answer with the not-found page (404) for this request's address
    (`what`: a sentence saying what is missing, when the address alone does
    not)."""
    name = call.req.path.rsplit("/", 1)[-1]
    instead = INSTEAD.get(name)
    advice, target = instead if instead else (None, None)
    if target and "{id}" in target:
        bug_id = str(call.query.get("id") or "").strip()
        target = url("/show_bug.cgi", id=bug_id) if bug_id.isdigit() else "/query.cgi"
    call.whoami()
    call.render("missing.html", status=404, title="No such page", address=call.req.path,
                what=what, advice=advice, target=target)
