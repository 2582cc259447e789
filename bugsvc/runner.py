"""Running one service call, the same way for every transport (REST,
JSON-RPC, XML-RPC): take the credentials out of the parameters, resolve the
caller, open the call's transaction, enforce the login rule, run the service,
apply include_fields/exclude_fields."""

from datetime import datetime, timezone

from . import errors, fields
from .auth import extract_credentials
from .caller import ANONYMOUS
from .context import Context
from .rest.routing import REQUIRED, EXEMPT, SELF


class Runner:
    """Runs service functions for the transports.

    db: the Database. config: the instance Config. authenticator: the
    Authenticator. clock: returns the current aware UTC datetime (tests).
    """

    def __init__(self, db, config, authenticator, clock=None):
        self.db = db
        self.config = config
        self.auth = authenticator
        self.clock = clock or (lambda: datetime.now(timezone.utc))

    def run(self, function, rule, params, headers, remote_ip):
        """Run `function(ctx, params)` as the caller the credentials name.

        rule: what the call needs, with the attributes of a Route: login
        (OPTIONAL/REQUIRED/EXEMPT/SELF), is_write, shapes, keeps_credentials.
        params: the merged parameters (credential keys are removed from it).
        headers: upper-case header names to values.
        Returns the service's result, trimmed by include/exclude fields.
        Errors: every ServiceError of authentication (300, 301, 306, 32000),
        410 when the rule needs a login, and those of the service.
        """
        creds = extract_credentials(params, headers, rule.keeps_credentials)
        now = self.clock()
        caller = ANONYMOUS if rule.login == SELF else self.auth.resolve(creds, remote_ip, now)
        flt = fields.FieldFilter(params.get("include_fields"), params.get("exclude_fields"))
        with self.db.transaction(write=rule.is_write) as conn:
            ctx = Context(conn=conn, caller=caller, now=now, config=self.config, auth=self.auth,
                          remote_ip=remote_ip, fields=flt)
            if not caller.is_logged_in:
                if rule.login == REQUIRED or (rule.login not in (EXEMPT, SELF)
                                              and ctx.param_is_on("requirelogin")):
                    errors.require_login(ctx)
            result = function(ctx, params)
        fields.apply(result, rule.shapes, flt)
        return result
