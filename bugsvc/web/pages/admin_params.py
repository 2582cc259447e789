"""The parameters page (editparams.cgi, for the members of tweakparams):
every parameter in the sections of Bugzilla's page, each with its
description and the control that fits it (on/off, a choice, a group, a
number, a password box that never shows the secret). It reads
Bugzilla.parameter_definitions and saves with Bugzilla.update_parameters,
which checks every value and stores nothing when one is refused; the
refusal is shown on the form, with the values as typed."""

import re

from ... import errors
from ...errors import ServiceError
from .admin import require_area
from .base import Page, responder
from .site import url


_NAMED = re.compile(r"parameter '([A-Za-z0-9_]+)'")


class Parameters(Page):
    """GET /editparams.cgi (?section=KEY: that section alone): the form;
    POST: save the parameters that changed, all or none."""

    @responder
    def on_get(self, call):
        require_area(call, "tweakparams")
        self._show(call, call.field("section"))

    def _show(self, call, section, status=200, error=None, typed=None, wrong=None):
        sections = call.read_one("Bugzilla.parameter_definitions", {})["sections"]
        chosen = [s for s in sections if s["name"] == section] or sections
        call.render("admin/params.html", status=status, title="Parameters",
                    sections=sections, shown=chosen, section=section if len(chosen) == 1
                    and len(sections) > 1 else "", error=error, typed=typed or {},
                    wrong=wrong)

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "tweakparams")
        section = call.field("section")
        sections = call.read_one("Bugzilla.parameter_definitions", {})["sections"]
        changed, typed = {}, {}
        for parameter in (p for s in sections for p in s["parameters"]):
            name, field = parameter["name"], f"param-{parameter['name']}"
            if parameter["control"] == "secret":
                if call.field(f"clear-{name}"):
                    changed[name] = ""
                elif call.field(field):
                    changed[name] = call.field(field)
                continue
            if field not in call.form:
                continue
            typed[name] = call.field(field)
            if typed[name].strip() != parameter["value"].strip():
                changed[name] = typed[name]
        if changed:
            try:
                call.write("Bugzilla.update_parameters", changed)
            except ServiceError as error:
                named = _NAMED.search(error.message)
                return self._show(call, section, status=errors.http_status(error.code),
                                  error=error.message, typed=typed,
                                  wrong=named.group(1) if named else None)
        call.redirect(url("/editparams.cgi", section=section or None), notice="saved")
