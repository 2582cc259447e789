"""What a code forge's webhook delivery says, read the same way for GitHub,
GitLab and Gitea/Forgejo: whether it is signed with the repository's
secret, which repository sent it, and its event in a neutral shape (a push
with its commits, or a pull/merge request opened or merged); and which bugs
a text names or says it fixes.

Each forge's documented format:
- GitHub: X-GitHub-Event (push, pull_request, ping), X-Hub-Signature-256
  "sha256=" + HMAC-SHA256 of the body in hex; repository.full_name.
- GitLab: X-Gitlab-Event ("Push Hook", "Merge Request Hook"), X-Gitlab-Token
  the secret itself; project.path_with_namespace.
- Gitea and Forgejo: X-Gitea-Event / X-Forgejo-Event (push, pull_request),
  X-Gitea-Signature / X-Forgejo-Signature the HMAC-SHA256 hex (no prefix);
  repository.full_name; payloads shaped like GitHub's.
"""

import hashlib
import hmac
import re
from dataclasses import dataclass, field


# A push names at most this many commits, and a text at most this many bugs,
# that are acted on (a forge sends at most 20 commits a push by default).
MAX_COMMITS = 100
MAX_BUGS = 20

_BUG = r"bug\s*#?\s*(\d{1,9})"
_HASH = r"#(\d{1,9})\b"
_FIX = r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s*"


@dataclass
class Commit:
    id: str
    message: str
    url: str
    author: str
    address: str          # the committer's e-mail (the author's when no committer is given)


@dataclass
class Request:
    number: int
    url: str
    title: str
    body: str
    action: str           # "opened" or "merged" (others are not acted on)
    address: str          # the author's e-mail when the forge gives it, else ""


@dataclass
class Event:
    kind: str             # "push", "request", "ping", or "other"
    repository: str
    default_branch: str = ""
    branch: str = ""
    commits: list = field(default_factory=list)
    request: Request | None = None


# Signatures -------------------------------------------------------------------------

def verified(forge, headers, body, secret):
    """True when the delivery `body` (bytes) carries `secret`'s proof in
    `headers` (upper-case names) the way `forge` sends it."""
    if forge == "gitlab":
        token = headers.get("X-GITLAB-TOKEN") or ""
        return hmac.compare_digest(token.encode("utf-8"), secret.encode("utf-8"))
    expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    if forge == "github":
        given = headers.get("X-HUB-SIGNATURE-256") or ""
        return hmac.compare_digest(given.encode("ascii", "replace"),
                                   ("sha256=" + expected).encode("ascii"))
    given = (headers.get("X-GITEA-SIGNATURE") or headers.get("X-FORGEJO-SIGNATURE") or "")
    return hmac.compare_digest(given.lower().encode("ascii", "replace"),
                               expected.encode("ascii"))


# Payloads ---------------------------------------------------------------------------

def repository_name(forge, payload):
    """The repository's full name as the payload gives it ("" when none)."""
    owner = payload.get("project") if forge == "gitlab" else payload.get("repository")
    if not isinstance(owner, dict):
        return ""
    name = owner.get("path_with_namespace" if forge == "gitlab" else "full_name")
    return name if isinstance(name, str) else ""


def event_of(forge, headers, payload):
    """The neutral Event of a verified delivery."""
    name = repository_name(forge, payload)
    source = payload.get("project") if forge == "gitlab" else payload.get("repository")
    default_branch = _text((source or {}).get("default_branch"))
    if forge == "github":
        kind = headers.get("X-GITHUB-EVENT", "")
    elif forge == "gitea":
        kind = headers.get("X-GITEA-EVENT") or headers.get("X-FORGEJO-EVENT") or ""
    else:
        kind = {"Push Hook": "push", "Merge Request Hook": "merge_request"}.get(
            headers.get("X-GITLAB-EVENT", ""), "")
    event = Event("other", name, default_branch)
    if kind == "ping":
        event.kind = "ping"
    elif kind == "push":
        event.kind = "push"
        ref = _text(payload.get("ref"))
        event.branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ""
        commits = payload.get("commits") if isinstance(payload.get("commits"), list) else []
        event.commits = [commit for commit in map(_commit, commits[:MAX_COMMITS]) if commit]
    elif kind in ("pull_request", "merge_request"):
        event.request = _request(forge, payload)
        if event.request is not None:
            event.kind = "request"
    return event


def _text(value):
    return value if isinstance(value, str) else ""


def _commit(raw):
    if not isinstance(raw, dict) or not _text(raw.get("id")):
        return None
    author = raw.get("author") if isinstance(raw.get("author"), dict) else {}
    committer = raw.get("committer") if isinstance(raw.get("committer"), dict) else {}
    return Commit(id=raw["id"][:64], message=_text(raw.get("message")),
                  url=_text(raw.get("url")), author=_text(author.get("name")),
                  address=_text(committer.get("email")) or _text(author.get("email")))


def _request(forge, payload):
    if forge == "gitlab":
        raw = payload.get("object_attributes")
        if not isinstance(raw, dict):
            return None
        action = {"open": "opened", "reopen": "opened", "merge": "merged"}.get(
            raw.get("action"), "")
        user = payload.get("user") if isinstance(payload.get("user"), dict) else {}
        number = raw.get("iid")
        body, address = _text(raw.get("description")), _text(user.get("email"))
    else:
        raw = payload.get("pull_request")
        if not isinstance(raw, dict):
            return None
        action = payload.get("action")
        if action == "closed":
            action = "merged" if raw.get("merged") is True else ""
        elif action not in ("opened", "reopened"):
            action = ""
        action = "opened" if action == "reopened" else action
        number = payload.get("number", raw.get("number"))
        body, address = _text(raw.get("body")), ""
    url = _text(raw.get("url") if forge == "gitlab" else raw.get("html_url"))
    if not action or not url or isinstance(number, bool) or not isinstance(number, int):
        return None
    return Request(number=number, url=url, title=_text(raw.get("title")), body=body,
                   action=action, address=address)


# References -------------------------------------------------------------------------

def references(text, hash_references=False):
    """(bugs named, bugs said to be fixed) in `text`, each a list of ids in
    order of first mention, at most MAX_BUGS. "Bug 12" (any case, "bug
    #12") names a bug; "#12" too when `hash_references`; "Fixes", "Closes"
    or "Resolves" (and their -ed/-es forms) before one says it is fixed."""
    target = f"(?:{_BUG}|{_HASH})" if hash_references else f"(?:{_BUG})"
    named, fixed = [], []
    for match in re.finditer(f"({_FIX})?{target}", text or "", re.IGNORECASE):
        number = int(next(group for group in match.groups()[1:] if group))
        if number not in named and len(named) < MAX_BUGS:
            named.append(number)
        if match.group(1) and number not in fixed and number in named:
            fixed.append(number)
    return named, fixed


def first_line(message):
    """The first line of a commit message (its subject), at most 200 characters."""
    line = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    return line if len(line) <= 200 else line[:199] + "…"
