"""The composition root: the call kernel's unit of work put together with
what the domain lends it. The kernel (bugsvc/call/) imports nothing of the
domain; it is given here who a caller is (accounts/caller.py), how the
instance parameters are read (catalogue/settings.py) and the journal of a
call's outbox events (bugs/events.py). Every way in makes its units of work
here: the app (for its Runner), the serving processes and the `deliver`
command (for the delivery worker), the operator's commands and the
importer."""

from .accounts.auth import Authenticator
from .accounts.caller import ANONYMOUS, load_caller
from .bugs.events import Journal
from .call.unit_of_work import UnitOfWork
from .catalogue import settings


def unit_of_work(db, config, clock=None, auth=None):
    """The UnitOfWork of `db` for the instance `config`. clock: returns the
    current aware UTC datetime (tests). auth: the Authenticator (default: one
    hashing new passwords at config.password_cost)."""
    return UnitOfWork(db, config, auth or Authenticator(db, config.password_cost),
                      load_caller=_caller, load_parameters=settings.load, new_journal=Journal,
                      clock=clock)


def _caller(conn, user_id):
    """The Caller of account `user_id` (the anonymous one for None; None for
    an account that does not exist)."""
    return ANONYMOUS if user_id is None else load_caller(conn, user_id)
