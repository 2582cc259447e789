"""`bugsvc import URL`: the importer's options into its Options, and its
exit status (bugsvc/importer/ does the work)."""

import sys
from datetime import timedelta

from ..importer import forms, run as importer_run, verify
from ..importer.client import Limits, SourceError, SourceMisbehaved
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
        password_cost=config.password_cost, limits=_limits(args),
        urlbase=_urlbase(args.urlbase), keep_see_also=args.keep_see_also,
        source_password=environ.get("BUGSVC_IMPORT_PASSWORD") or None)
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
    except SourceMisbehaved as exc:
        print(f"bugsvc import: stopped: {exc}", file=err)
        return 1
    except SourceError as exc:
        print(f"bugsvc import: the source failed: {exc}", file=err)
        return 1


def _urlbase(text):
    """The new installation's address as the urlbase parameter holds it
    (ending with a slash). Errors: UsageError."""
    if text is None:
        return None
    text = text.strip()
    if not text.endswith("/"):
        text += "/"
    try:
        importer_run.rest_base(text)
    except ValueError:
        raise UsageError(f"--urlbase must be an http:// or https:// address, not '{text}'") \
            from None
    return text


def _limits(args):
    """The bounds of what the source may cost, from the options."""
    default = Limits()
    return Limits(
        max_bytes=_number(args.max_answer_mb, "--max-answer-mb", 256, 1, 65536) * 1024 * 1024,
        deadline=float(_number(args.request_timeout, "--request-timeout",
                               int(default.deadline), 1, 86400)),
        max_wait=float(_number(args.max_wait, "--max-wait", int(default.max_wait), 0, 86400)),
        max_depth=default.max_depth, max_total_wait=default.max_total_wait)


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
