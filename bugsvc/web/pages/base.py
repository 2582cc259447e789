"""The base of every page resource: each responder gets a PageCall, and
whatever an operation refuses becomes a page saying so, with the status the
API gives the same refusal (a hidden bug and a missing one alike)."""

import functools
import logging

import falcon

from ... import errors
from ...errors import ServiceError
from .site import PageCall, PageRefused, url


log = logging.getLogger("bugsvc")


def responder(method):
    """Wrap a page method `method(self, call, **path_values)` as a falcon
    responder: refusals become pages."""
    @functools.wraps(method)
    def wrapped(self, req, resp, **values):
        call = PageCall(self.site, req, resp)
        try:
            method(self, call, **values)
        except PageRefused as refused:
            call.render("error.html", status=refused.status, title="Refused",
                        message=refused.message, code=None)
        except ServiceError as error:
            show_error(call, error)
    return wrapped


def show_error(call, error, status=None):
    """Answer with the page for ServiceError `error`: the sign-in form when
    a sign-in would help (410; or a refusal to an anonymous visitor), else
    the error with its code."""
    status = status or error.status
    if getattr(error, "retry_after", None):
        call.resp.set_header("Retry-After", str(error.retry_after))
    if error.code == errors.LOGIN_REQUIRED or (
            call.user is None and not call.token and status == 401
            and error.code not in (errors.INVALID_LOGIN_OR_PASSWORD, errors.ACCOUNT_DISABLED)):
        call.render("login.html", status=401, title="Sign in", message=error.message,
                    target=call.here() if call.req.method == "GET" else "/", login="")
        return
    if call.token and call.user is None:
        # The header (and a sudo session's banner) name the visitor on the
        # error page too, although the page's own reads were refused.
        try:
            call.whoami()
        except ServiceError:
            pass
    call.render("error.html", status=status, title="Sorry", message=error.message,
                code=error.code)


class Page:
    """A page resource over the Site."""

    def __init__(self, site):
        self.site = site


def require_user(call):
    """The visitor's account. Errors: 410 (the sign-in page) when logged out."""
    user = call.whoami()
    if user is None:
        raise ServiceError(errors.LOGIN_REQUIRED, "You must sign in to use this page.")
    return user


def not_found(call):
    raise falcon.HTTPNotFound()


__all__ = ["Page", "responder", "require_user", "show_error", "url"]
