"""Scheduled searches mailed (editwhines.cgi), for members of
bz_canusewhines, under Bugzilla's form names: each event is a form with
its subject (`event_N_subject`), body (`event_N_body`), "mail even when
nothing is found" (`event_N_mailifnobugs`), its schedules (`day_S`,
`time_S`, `mailto_type_S`, `mailto_S`, `remove_schedule_S`) and searches
(`query_name_Q`, `query_title_Q`, `query_sort_Q`, `query_onemailperbug_Q`,
`remove_query_Q`); its buttons save it (`update`), add a schedule
(`add_schedule`) or a search (`add_query`), or remove it (`remove_event`).
`add_event` adds an empty event. The operations are Whine.get,
Whine.create_event, Whine.update_event and Whine.delete_event; a refused
change is shown on the form with its reason, and nothing of it is kept."""

import re

from ... import errors
from ...errors import ServiceError
from .base import Page, require_user, responder
from .site import PageRefused


# A schedule added by the "Add a schedule" button, as Bugzilla's: Sundays at 2.
NEW_SCHEDULE = {"day": "Sun", "time": "2", "mailto_type": 0, "mailto": ""}
_NUMBERED = re.compile(r"^(day|query_name)_(\d{1,18})$")


def _numbers(form, prefix):
    """The ids of the schedules ('day') or searches ('query_name') a form carries."""
    return sorted(int(match.group(2)) for match in map(_NUMBERED.match, form)
                  if match and match.group(1) == prefix)


class EditWhines(Page):
    """GET /editwhines.cgi: one's events; POST: add, change or remove one."""

    @responder
    def on_get(self, call):
        require_user(call)
        self._show(call)

    def _show(self, call, refused=None, status=200):
        whines, searches = call.read(("Whine.get", {}), ("SavedSearch.get", {}))
        groups = call.user["groups"] if call.user else []
        call.render("editwhines.html", status=status, title="Scheduled searches",
                    events=whines["events"], days=whines["days"], times=whines["times"],
                    searches=[item["name"] for item in searches["saved_searches"]],
                    at_others="bz_canusewhineatothers" in groups, refused=refused)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_user(call)
        try:
            location = self._change(call)
        except (ServiceError, PageRefused) as error:
            if getattr(error, "code", None) == errors.LOGIN_REQUIRED:
                raise
            event = call.field("event")
            self._show(call, refused={"event": int(event) if event.isdigit() else None,
                                      "message": error.message},
                       status=error.status)
            return
        call.redirect(location, notice="saved")

    def _change(self, call):
        """Make the change the form asks for; returns where to go next."""
        if call.field("add_event"):
            created = call.write("Whine.create_event", {})
            return f"/editwhines.cgi#event-{created['id']}"
        event = call.field("event")
        if not event.isdigit():
            raise PageRefused(400, "The form names no event.")
        if call.field("remove_event"):
            call.write("Whine.delete_event", {"id": event})
            return "/editwhines.cgi"
        form = call.form
        schedules = [{"id": number, "day": call.field(f"day_{number}"),
                      "time": call.field(f"time_{number}"),
                      "mailto_type": call.field(f"mailto_type_{number}") or 0,
                      "mailto": call.field(f"mailto_{number}")}
                     for number in _numbers(form, "day")
                     if not call.field(f"remove_schedule_{number}")]
        if call.field("add_schedule"):
            schedules.append(dict(NEW_SCHEDULE))
        queries = [{"id": number, "name": call.field(f"query_name_{number}"),
                    "title": call.field(f"query_title_{number}"),
                    "sortkey": call.field(f"query_sort_{number}") or 0,
                    "onemailperbug": bool(call.field(f"query_onemailperbug_{number}"))}
                   for number in _numbers(form, "query_name")
                   if not call.field(f"remove_query_{number}")]
        if call.field("add_query"):
            first = call.read_one("SavedSearch.get")["saved_searches"]
            if not first:
                raise PageRefused(400, "Save a search first (on the bug list: \"Save this "
                                       "search\"); an event mails saved searches.")
            queries.append({"name": first[0]["name"], "title": "", "sortkey": 0,
                            "onemailperbug": False})
        call.write("Whine.update_event", {
            "id": event, "subject": call.field(f"event_{event}_subject"),
            "body": call.field(f"event_{event}_body"),
            "mailifnobugs": bool(call.field(f"event_{event}_mailifnobugs")),
            "schedules": schedules, "queries": queries})
        return f"/editwhines.cgi#event-{event}"
