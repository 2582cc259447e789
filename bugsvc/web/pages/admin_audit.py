"""The audit log page (auditlog.cgi, for the members of admin): who
changed which setting, account or catalogue object, and when, through any
way in; filtered by words in the object's name, by who, by kind and by
dates. It reads Bugzilla.audit_log (GET /rest/audit_log) and shows what
that call answers."""

from ... import errors
from ...errors import ServiceError
from .admin import require_area
from .base import Page, responder
from .site import url


PAGE_SIZE = 100
_FILTERS = ("object", "user", "class", "since", "until")


class AuditLog(Page):
    """GET /auditlog.cgi?object=..&user=..&class=..&since=..&until=..&offset=N:
    the entries that match, newest first, PAGE_SIZE a page. A filter the
    call refuses (an unreadable date ...) is shown on the form as typed,
    with the reason."""

    @responder
    def on_get(self, call):
        require_area(call, "admin")
        typed = {name: call.field(name).strip() for name in _FILTERS}
        typed["class"] = [name for name in call.fields("class") if name]
        no_account = bool(call.field("no_account"))
        params = {"limit": PAGE_SIZE, "offset": _offset(call)}
        for name in ("object", "since", "until"):
            if typed[name]:
                params[name] = typed[name]
        if no_account:
            params["user"] = ""
        elif typed["user"]:
            params["user"] = typed["user"]
        if typed["class"]:
            params["class"] = typed["class"]
        error, status = None, 200
        try:
            found = call.read_one("Bugzilla.audit_log", params)
        except ServiceError as refused:
            if refused.code in (errors.AUTH_FAILURE, errors.LOGIN_REQUIRED):
                raise
            error, status = refused.message, errors.http_status(refused.code)
            found = call.read_one("Bugzilla.audit_log", {"limit": 1})
            found = {"entries": [], "total_matches": 0, "classes": found["classes"]}
        shown = {key: value for key, value in params.items() if key not in ("limit", "offset")}
        pages = {}
        if params["offset"] > 0:
            pages["newer"] = url("/auditlog.cgi", **_query(shown, max(0, params["offset"]
                                                                      - PAGE_SIZE)))
        if params["offset"] + PAGE_SIZE < found["total_matches"]:
            pages["older"] = url("/auditlog.cgi", **_query(shown, params["offset"] + PAGE_SIZE))
        call.render("admin/audit_log.html", status=status, title="Audit log", typed=typed,
                    no_account=no_account, entries=found["entries"],
                    total=found["total_matches"], classes=found["classes"],
                    offset=params["offset"], pages=pages, error=error)


def _offset(call):
    text = call.field("offset")
    return int(text) if text.isdigit() and len(text) < 10 else 0


def _query(shown, offset):
    """The address's query for the same filters at `offset`."""
    query = {key: value for key, value in shown.items() if key != "user"}
    if "user" in shown:
        if shown["user"] == "":
            query["no_account"] = "1"
        else:
            query["user"] = shown["user"]
    query["offset"] = offset or None
    return query
