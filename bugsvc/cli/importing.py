"""`bugsvc import URL`: the importer's options into its Options, and its
exit status (bugsvc/importer/ does the work)."""

import sys
from datetime import timedelta

from ..importer import run as importer_run
from ..importer import forms, verify
from ..importer.client import SourceError
from .options import UsageError


def import_bugzilla(config, args, environ, out=sys.stdout, err=sys.stderr):
    """Import (or, with --verify, compare) the source args.url into
    config.database. Returns the exit status: 0 done (verify: no
    difference), 1 the source failed (verify: differences found), 2 the
    target refuses the import, 130 interrupted.
    Errors: UsageError for a bad option value."""
    options = importer_run.Options(
        url=args.url, db_path=config.database.text,
        api_key=args.api_key or environ.get("BUGSVC_IMPORT_API_KEY") or None,
        login=args.login, since=_since(args.since), dry_run=args.dry_run,
        concurrency=_number(args.concurrency, "--concurrency", 4, 1, 32),
        page_size=_number(args.page_size, "--page-size", 100, 1, 1000),
        overlap=timedelta(minutes=_number(args.overlap, "--overlap", 5, 0, 1440)),
        admin_email=config.admin_email, admin_password=config.admin_password,
        password_cost=config.password_cost)
    try:
        importer_run.rest_base(options.url)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        if args.verify:
            return verify.verify_command(options, out, err)
        return importer_run.run_import(options, out, err)
    except importer_run.ImportRefused as exc:
        print(f"bugsvc import: {exc}", file=err)
        return 2
    except SourceError as exc:
        print(f"bugsvc import: the source failed: {exc}", file=err)
        return 1


def _since(text):
    if text is None:
        return None
    try:
        return forms.when(text, "--since")
    except forms.FormError:
        raise UsageError(f"--since must be a time such as 2024-05-01T10:00:00Z, not '{text}'") \
            from None


def _number(text, name, default, low, high):
    if text is None:
        return default
    text = str(text).strip()
    if not text.isdigit() or not low <= int(text) <= high:
        raise UsageError(f"{name} must be a number from {low} to {high}, not '{text}'")
    return int(text)
