"""Signing in with an OpenID Connect provider, and the page where the
administrator sets the providers up.

/oidc/login?provider=NAME sends the browser to the provider (over
User.oidc_authorization) with a state, a nonce and a PKCE verifier kept in
a cookie signed with the site's key (the browser's own, for ten minutes);
the provider sends it back to /oidc/callback, which accepts only the state
of that cookie, signs in over User.login_oidc and starts the session as the
sign-in form does (or, for an account with a second factor, asks its code
as the form does after a right password). Every failure (the provider down, a refusal, an
id_token that is not right) is a page saying what happened.

editoidc.cgi (tweakparams members, as the parameters it changes): the
providers of the parameter oidc_providers, one form to add one and a button
to remove each; client secrets are never shown.
"""

import base64
import hmac
import json

from ... import errors
from ...errors import ServiceError
from .account import after_first_factor
from .admin import require_area
from .base import Page, responder
from .site import local_target, url


FLOW_COOKIE = "bugsvc_oidc"
FLOW_SECONDS = 600
CALLBACK = "/oidc/callback"


def redirect_uri(call):
    """This site's callback address: under urlbase when it is set, else
    under the address the browser used."""
    base = call.setting("urlbase")
    return (base.rstrip("/") if base else call.req.prefix) + CALLBACK


def _pack(call, flow):
    text = base64.urlsafe_b64encode(json.dumps(flow).encode()).decode()
    return text + "." + call.site.sign("oidc:" + text)


def _unpack(call, value):
    text, _, signature = (value or "").rpartition(".")
    if not text or not hmac.compare_digest(signature, call.site.sign("oidc:" + text)):
        return None
    try:
        flow = json.loads(base64.urlsafe_b64decode(text.encode()))
    except ValueError:
        return None
    return flow if isinstance(flow, dict) else None


def _failed(call, message, status=400):
    call.render("error.html", status=status, title="Sign-in failed", message=message, code=None,
                back="/login")


class Start(Page):
    """GET /oidc/login?provider=NAME[&target=PATH]: off to the provider."""

    @responder
    def on_get(self, call):
        target = local_target(call.query.get("target"))
        name = call.query.get("provider") or ""
        answer = call.read_one("User.oidc_authorization",
                               {"provider": name, "redirect_uri": redirect_uri(call)})
        flow = {"provider": name, "state": answer["state"], "nonce": answer["nonce"],
                "verifier": answer["code_verifier"], "target": target}
        # Lax: the provider sends the browser back with a top-level GET.
        call.resp.set_cookie(FLOW_COOKIE, _pack(call, flow), path=call.cookie_path, http_only=True,
                             secure=call.secure, same_site="Lax", max_age=FLOW_SECONDS)
        call.resp.status = 303
        call.resp.location = answer["url"]
        call.resp.set_header("Referrer-Policy", "no-referrer")


class Callback(Page):
    """GET /oidc/callback?state=S&code=C (or &error=E): signs in."""

    @responder
    def on_get(self, call):
        flow = _unpack(call, call.req.cookies.get(FLOW_COOKIE))
        call.resp.unset_cookie(FLOW_COOKIE, path=call.cookie_path)
        state = call.query.get("state") or ""
        if flow is None or not hmac.compare_digest(state.encode(), flow["state"].encode()):
            return _failed(call, "This sign-in was not started from this browser, or it took "
                                 "too long. Start it again from the sign-in page.")
        if call.query.get("error"):
            reason = call.query.get("error_description") or call.query.get("error")
            return _failed(call, f"{flow['provider']} did not sign you in: {reason}.", 401)
        try:
            answer = call.write("User.login_oidc", {
                "provider": flow["provider"], "code": call.query.get("code") or "",
                "redirect_uri": redirect_uri(call), "code_verifier": flow["verifier"],
                "nonce": flow["nonce"]})
        except ServiceError as error:
            return _failed(call, error.message, errors.http_status(error.code))
        after_first_factor(call, answer, flow["target"], remember=False)


class EditProviders(Page):
    """GET /editoidc.cgi: the providers and a form to add one; POST
    action=add (name, issuer, client_id, client_secret, group_claim,
    groups as lines "claim value = group") or action=remove (name)."""

    @responder
    def on_get(self, call):
        require_area(call, "tweakparams")
        self._show(call)

    def _providers(self, call):
        value = call.read_one("Bugzilla.parameters", {})["parameters"]["oidc_providers"]
        return json.loads(value) if value else []

    def _show(self, call, status=200, error=None, typed=None):
        call.render("admin/oidc.html", status=status, title="Single sign-on providers",
                    providers=self._providers(call), error=error, typed=typed or {},
                    callback=redirect_uri(call),
                    may_create=call.setting_is_on("oidc_create_accounts"))

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_area(call, "tweakparams")
        providers = self._providers(call)
        typed = {}
        if call.field("action") == "remove":
            name = call.field("name").lower()
            providers = [p for p in providers if p["name"].lower() != name]
        else:
            typed = {key: call.field(key).strip() for key in
                     ("name", "issuer", "client_id", "client_secret", "group_claim", "groups")}
            provider = {key: typed[key] for key in ("name", "issuer", "client_id",
                                                    "client_secret")}
            if typed["group_claim"]:
                provider["group_claim"] = typed["group_claim"]
            groups = {}
            for line in typed["groups"].splitlines():
                value, _, group = line.partition("=")
                if value.strip() and group.strip():
                    groups[value.strip()] = group.strip()
            if groups:
                provider["groups"] = groups
            providers.append(provider)
        try:
            call.write("Bugzilla.update_parameters",
                       {"oidc_providers": json.dumps(providers) if providers else ""})
        except ServiceError as error:
            if error.code != errors.USER_ERROR:
                raise
            typed.pop("client_secret", None)
            return self._show(call, status=400, error=error.message, typed=typed)
        call.redirect(url("/editoidc.cgi"), notice="saved")
