"""user_match.cgi: the accounts matching a few typed characters, as JSON,
for the people pickers' suggestions (static/people.js). It runs User.get
with `match` as the visitor, exactly as GET /rest/user?match=... does (only
the accounts the visitor may see, disabled ones left out), for the page's
session: the REST interface never reads the session cookie, which scripts
cannot read either, so the pickers ask here instead."""

import orjson

from ...errors import ServiceError
from .base import Page, responder


# Fewer typed characters than this suggest nobody (a match on one or two
# letters names half the installation and says nothing).
MIN_CHARACTERS = 3
# At most this many suggestions (maxusermatches may cap them lower).
PAGE_SIZE = 10
# Longer text is no login anybody types.
MAX_CHARACTERS = 127


class UserMatch(Page):
    """GET /user_match.cgi?match=TEXT: {"users": [{"name", "real_name"}]}
    of at most PAGE_SIZE enabled accounts the visitor may see whose login or
    real name holds TEXT; an empty list for fewer than MIN_CHARACTERS (or
    more than MAX_CHARACTERS) characters and for a visitor not signed in."""

    @responder
    def on_get(self, call):
        text = call.query.get("match")
        text = text.strip() if isinstance(text, str) else ""
        users = []
        if MIN_CHARACTERS <= len(text) <= MAX_CHARACTERS and call.token:
            try:
                found = call.read_one("User.get", {"match": [text], "limit": PAGE_SIZE,
                                                   "include_fields": "name,real_name"})
            except ServiceError:
                # A session that ended: its visitor is anonymous now, and
                # User.get refuses matching to them (505).
                found = {"users": []}
            users = [{"name": person["name"], "real_name": person.get("real_name") or ""}
                     for person in found["users"][:PAGE_SIZE]]
        call.resp.status = 200
        call.resp.content_type = "application/json"
        call.resp.data = orjson.dumps({"users": users})
        call.resp.set_header("Cache-Control", "no-store")
        call.resp.set_header("X-Content-Type-Options", "nosniff")
