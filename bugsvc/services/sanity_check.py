"""The sanity check (Bugzilla's sanitycheck.cgi; a bugsvc addition over
RPC, which the reference has only as a page). The checks and repairs live
in bugsvc/bugs/sanity.py."""

from ..bugs import sanity
from ..errors import require_group


def run(ctx, params):
    """Run every check, changing nothing (editcomponents, as Bugzilla's page).

    params: none.
    Returns {"checks": [{name, title, count, samples (up to 20 ids),
    samples_are ("bug", "message", "group"), repairable,
    advice}]}.
    Errors: 410 logged out; 304 not in editcomponents.
    """
    require_group(ctx, "editcomponents", "run the sanity check")
    return {"checks": sanity.run(ctx)}


def repair(ctx, params):
    """Repair what one check finds (admin), in one transaction.

    params: check (its name; those with repairable true: regexp_groups,
    parked_mail).
    Returns {"check", "repaired": how many rows it fixed}.
    Errors: 410 logged out; 304 not in admin; 51 unknown check or one
    without a repair.
    """
    require_group(ctx, "admin", "repair what the sanity check finds")
    name = params.get("check")
    return {"check": name, "repaired": sanity.repair(ctx, name)}
