"""See Also links: which URLs are accepted, and
links to bugs of this installation ("local" links, mirrored on the other bug).

Accepted, like the reference: a bare word, taken as the number or alias
of a bug of this installation; the installation's own show_bug.cgi URL;
and http(s) links to bugs of other trackers: Bugzilla (show_bug.cgi?id=N),
Launchpad, Debian, GitHub and GitLab issues or pull requests, JIRA, Trac,
MantisBT, SourceForge, Google Code and Chromium.

A local link is stored as `{urlbase}show_bug.cgi?id=N` with the bug's
number, also when it was given by alias (aliases can change, numbers do
not). A word that is no bug the caller can see answers 100, whether no bug
has it or the bug is hidden: the answer never tells that a hidden bug has
that alias. An alias with characters other than letters, digits and `_`
is also found; when it names no bug the caller can see, the value is
checked as a URL (112), as the reference does with every such value.
"""

import re
from urllib.parse import parse_qs, urlencode, urlsplit

from ..errors import URL_INVALID, USER_ERROR, ServiceError
from . import visibility
from .lookup import visible_bug_id


MAX_LENGTH = 255
LOCAL_PATH = "show_bug.cgi?id="
# What the reference takes for a local bug number or alias: one word.
_WORD = re.compile(r"\w+")


def local_prefix(ctx):
    """The start of a local link: urlbase + 'show_bug.cgi?id='."""
    return ctx.param("urlbase") + LOCAL_PATH


def local_url(ctx, bug_id):
    return f"{local_prefix(ctx)}{bug_id}"


def local_bug_id(ctx, url):
    """The bug id a stored link points to when it is local, else None."""
    prefix = local_prefix(ctx)
    if url.lower().startswith(prefix.lower()) and url[len(prefix):].isdigit():
        return int(url[len(prefix):])
    return None


def _invalid(url, reason):
    return ServiceError(URL_INVALID, f"'{url}' is not a valid See Also link: {reason}.")


def check(ctx, value, bug_id=None):
    """The link to store for `value` and the local bug id it points to (or
    None). bug_id: the bug getting the link (None while being created).

    Errors: 112 invalid or longer than 255 characters; 100 a word that is
    no visible bug's alias; 101/102 an unknown or invisible bug number;
    32000 a link to itself.
    """
    raw = str(value).strip()
    if len(raw) > MAX_LENGTH:
        raise ServiceError(URL_INVALID, f"See Also links cannot be longer than {MAX_LENGTH} "
                                        "characters.")
    local = raw[1:] if raw.startswith("#") else raw
    prefix = local_prefix(ctx)
    if ctx.param("urlbase") and local.lower().startswith(prefix.lower()):
        local = local[len(prefix):]
    if _WORD.fullmatch(local):
        target = visible_bug_id(ctx, local)
    else:
        target = _visible_alias_target(ctx, local)
        if target is None:
            return _remote(raw), None
    if target == bug_id:
        raise ServiceError(USER_ERROR, "A bug cannot have a See Also link to itself.")
    return local_url(ctx, target), target


def url_to_remove(ctx, value):
    """The stored link that `value` names for removal: the local link of a
    bug number, or of the alias of a bug the caller can see; else `value`
    itself (a link no bug has is silently ignored)."""
    local = str(value).strip()
    local = local[1:] if local.startswith("#") else local
    if local.isdigit() and local.isascii():
        return local_url(ctx, local.lstrip("0") or "0")
    target = _visible_alias_target(ctx, local)
    return value if target is None else local_url(ctx, target)


def _visible_alias_target(ctx, text):
    """The bug whose alias is `text`, when the caller can see it; else None."""
    if not text or "/" in text:
        return None
    row = ctx.conn.execute("SELECT bug_id FROM bug_aliases WHERE lower(alias) = lower(?)",
                           (text,)).fetchone()
    if row is None or not visibility.visible_bug_ids(ctx, [row[0]]):
        return None
    return row[0]


def _remote(raw):
    try:
        parts = urlsplit(raw)
    except ValueError:
        raise _invalid(raw, "it is not a URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise _invalid(raw, "only http and https links to other bug trackers are accepted")
    host = parts.hostname.lower()
    path = parts.path
    query = parse_qs(parts.query)
    base = f"{parts.scheme.lower()}://{parts.netloc}"
    if path.endswith("show_bug.cgi") or path.endswith("view.php"):
        bug = (query.get("id") or [""])[0]
        if not bug.isdigit():
            raise _invalid(raw, "the link must name a bug by its number (id=...)")
        return f"{base}{path}?{urlencode({'id': bug})}"
    if host.endswith("launchpad.net") and re.search(r"/\+bug/\d+$", path):
        return f"{base}{path}"
    if host == "bugs.debian.org":
        if re.fullmatch(r"/\d+", path):
            return f"{base}{path}"
        bug = (query.get("bug") or [""])[0]
        if path.endswith("bugreport.cgi") and bug.isdigit():
            return f"{base}{path}?{urlencode({'bug': bug})}"
    if re.search(r"^/[^/]+/[^/]+/(?:-/)?(?:issues|pull|merge_requests)/\d+$", path) and (
            host == "github.com" or "gitlab" in host):
        return f"{base}{path}"
    if re.search(r"/browse/[A-Za-z][A-Za-z0-9_]*-\d+$", path):
        return f"{base}{path}"
    if re.search(r"/ticket/\d+$", path):
        return f"{base}{path}"
    if host.endswith("sourceforge.net") and re.search(r"/bugs/\d+/?$", path):
        return f"{base}{path}"
    if host in ("code.google.com", "bugs.chromium.org") and path.endswith("/issues/detail"):
        bug = (query.get("id") or [""])[0]
        if bug.isdigit():
            return f"{base}{path}?{urlencode({'id': bug})}"
    if host == "crbug.com" and re.fullmatch(r"/\d+", path):
        return f"{base}{path}"
    raise _invalid(raw, "it does not point to a bug of a known bug tracker")
