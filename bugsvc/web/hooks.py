"""Receivers of code forge webhooks (a bugsvc extension): /hooks/github,
/hooks/gitlab and /hooks/gitea (Gitea and Forgejo).

A delivery is taken only from a registered repository (POST
/rest/forge_repository) and only when it carries that repository's secret
(bugsvc/forge/events.py says how each forge proves it); anything else is
refused with 403, the same answer whether the repository is unknown or the
proof wrong.

- A push: each commit whose message names bugs ("Bug 12"; "#12" when the
  repository says so) comments on each with the commit's link, author and
  first line; "Fixes/Closes/Resolves bug 12" on one of the repository's
  branches (default: its default branch) also resolves the bug FIXED. The
  comment and the change are made by the account whose login is the
  committer's e-mail, else the repository's bot account, with that
  account's rights; with neither, the commit is left alone.
- A pull or merge request opened (or reopened) naming bugs adds its link to
  their See Also and comments; merged, it comments again.

Each is done once per commit (or request) and bug, however often the forge
delivers the event again (a record of it is written in the change's own
transaction). A bug that does not exist, that the acting account may not
see or change, is left alone without a word: the answer is the same
whatever the bugs are, so a forge learns nothing about them.
"""

import logging

from .. import errors
from ..api import json_input
from ..api.operations import OPERATIONS
from ..errors import ServiceError
from ..forge import events, repository
from .http import json_bytes, read_body, upper_headers


log = logging.getLogger("bugsvc.forge")

_REFUSED = "This delivery is not from a registered repository, or not signed with its secret."
_VISIBILITY_CODES = (errors.BUG_DOES_NOT_EXIST, errors.BUG_ACCESS_DENIED, errors.IMPROPER_BUG_ID)


class ForgeHook:
    """Falcon resource receiving one forge's webhooks. runner: the shared
    Runner (its units of work run the changes); forge: "github", "gitlab"
    or "gitea"; max_body_bytes: the request body limit."""

    def __init__(self, runner, forge, max_body_bytes):
        self.units = runner.units
        self.forge = forge
        self.max_body_bytes = max_body_bytes

    def on_post(self, req, resp):
        req.context.operation = f"hook {self.forge}"
        body = read_body(req, self.max_body_bytes)
        try:
            payload = json_input.decode(body)
        except json_input.JsonInputError as exc:
            raise ServiceError(errors.USER_ERROR, f"The delivery is not JSON: {exc}.") from None
        if not isinstance(payload, dict):
            raise ServiceError(errors.USER_ERROR, "The delivery is not a JSON object.")
        headers = upper_headers(req)
        name = events.repository_name(self.forge, payload)
        with self.units.db.transaction() as conn:
            registration = repository.registered(conn, self.forge, name)
        if registration is None or not events.verified(self.forge, headers, body,
                                                       registration["secret"]):
            log.info("%s refused %s delivery for %r", req.context.client_address, self.forge,
                     name)
            _answer(resp, 403, {"error": True, "code": errors.AUTH_FAILURE,
                                "message": _REFUSED})
            return
        event = events.event_of(self.forge, headers, payload)
        if event.kind == "push":
            self._push(registration, event, req.context.client_address)
        elif event.kind == "request":
            self._request(registration, event.request, req.context.client_address)
        log.info("%s %s %s event for %s", req.context.client_address, self.forge, event.kind,
                 registration["repository"])
        _answer(resp, 200, {"received": True})

    # Pushes -----------------------------------------------------------------------

    def _push(self, registration, event, remote_ip):
        branches = registration["branches"] or [event.default_branch]
        fixing_branch = bool(event.branch) and event.branch in branches
        for commit in event.commits:
            named, fixed = events.references(commit.message,
                                             bool(registration["hash_references"]))
            if not named:
                continue
            actor = self._actor(registration, commit.address)
            if actor is None:
                continue
            for bug_id in named:
                fixes = fixing_branch and bug_id in fixed
                self._commit_on_bug(registration, commit, event.branch, bug_id, fixes, actor,
                                    remote_ip)

    def _commit_on_bug(self, registration, commit, branch, bug_id, fixes, actor, remote_ip):
        """Comment on (and, when `fixes`, resolve) one bug for one commit,
        once; nothing when the actor may not see it."""
        text = (f"Commit {commit.id[:12]} by {commit.author or 'someone'} in "
                f"{registration['repository']} ({branch or 'no branch'}):\n"
                f"{events.first_line(commit.message)}\n{commit.url}").strip()
        repository_id = registration["id"]

        def work(ctx):
            done_comment = repository.linked(ctx.conn, repository_id, "commit", commit.id, bug_id)
            done_fix = repository.linked(ctx.conn, repository_id, "fix", commit.id, bug_id)
            resolve = fixes and not done_fix and _is_open(ctx, bug_id)
            if resolve:
                comment = text if not done_comment else (
                    f"Fixed by commit {commit.id[:12]} on {branch}.\n{commit.url}".strip())
                _service("Bug.update", ctx, {"ids": [bug_id], "status": "RESOLVED",
                                             "resolution": "FIXED", "comment": {"body": comment}})
                repository.link(ctx, repository_id, "fix", commit.id, bug_id)
            elif not done_comment:
                _service("Bug.add_comment", ctx, {"id": bug_id, "comment": text})
            else:
                return
            if not done_comment:
                repository.link(ctx, repository_id, "commit", commit.id, bug_id)
        if not self._attempt(work, actor, remote_ip) and fixes:
            # Not allowed to resolve it (or it cannot move to RESOLVED):
            # the commit is still worth its comment.
            fixes = False
            self._attempt(work, actor, remote_ip)

    # Requests ---------------------------------------------------------------------

    def _request(self, registration, request, remote_ip):
        named, _ = events.references(f"{request.title}\n{request.body}",
                                     bool(registration["hash_references"]))
        actor = self._actor(registration, request.address)
        if not named or actor is None:
            return
        kind = f"request {request.action}"
        verb = "opened" if request.action == "opened" else "merged"
        text = f"Pull request #{request.number} {verb}: {request.title}\n{request.url}"
        for bug_id in named:
            def work(ctx, bug_id=bug_id):
                if repository.linked(ctx.conn, registration["id"], kind, request.url, bug_id):
                    return
                _service("Bug.add_comment", ctx, {"id": bug_id, "comment": text})
                repository.link(ctx, registration["id"], kind, request.url, bug_id)

            def see_also(ctx, bug_id=bug_id):
                _service("Bug.update", ctx, {"ids": [bug_id],
                                             "see_also": {"add": [request.url]}})
            if self._attempt(work, actor, remote_ip) and request.action == "opened":
                # A link bugsvc does not take as See Also (112) leaves the comment.
                self._attempt(see_also, actor, remote_ip)

    # Running the changes ----------------------------------------------------------

    def _actor(self, registration, address):
        """The account acting for `address`: its own, else the bot account, else None."""
        with self.units.db.transaction() as conn:
            account = repository.account_for_address(conn, address)
        return account if account is not None else registration["bot_account_id"]

    def _attempt(self, work, actor, remote_ip):
        """Run work(ctx) as account `actor` in one write transaction. True
        when it was done; False (nothing stored) when the account may not do
        it: a refusal is not the forge's business, so it is only logged."""
        try:
            self.units.run(work, write=True, caller=actor, remote_ip=remote_ip)
        except ServiceError as exc:
            if exc.code not in _VISIBILITY_CODES:
                log.info("forge change refused for account %s: %s %s", actor, exc.code,
                         exc.message)
            return False
        return True


def _service(name, ctx, params):
    """Run operation `name`'s service in the work's context (its rules are
    the service's: the actor's rights, the bug's visibility)."""
    return OPERATIONS[name].service(ctx, params)


def _is_open(ctx, bug_id):
    """True when the bug is open (errors: the bug's, for one the actor may not see)."""
    bug = _service("Bug.get", ctx, {"ids": [bug_id]})["bugs"][0]
    return bool(bug.get("is_open"))


def _answer(resp, status, body):
    resp.status = status
    resp.content_type = "application/json"
    resp.data = json_bytes(body)


def add_hooks(app, runner, max_body_bytes):
    """Route /hooks/<forge> for every forge to its receiver."""
    for forge in repository.FORGES:
        app.add_route(f"/hooks/{forge}", ForgeHook(runner, forge, max_body_bytes))
