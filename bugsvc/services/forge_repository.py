"""Code forge repositories whose webhooks bugsvc receives (a bugsvc
extension; administrators only). Behaviour lives in bugsvc/forge/."""

from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError
from ..forge import repository


_CHANGEABLE = ("repository", "secret", "branches", "bot_account", "hash_references")


def get(ctx, params):
    """The registered repositories.

    params: none.
    Returns {"forge_repositories": [{"id", "forge", "repository", "branches",
    "hash_references", "bot_account", "hook" (the path its webhook calls),
    "created"}]}; secrets are never shown.
    Errors: 410 logged out; 304 not an administrator.
    """
    return {"forge_repositories": repository.listed(ctx)}


def create(ctx, params):
    """Register a repository of a code forge.

    params: forge (github, gitlab or gitea), repository (its full name, as
    its events give it), secret (the webhook's secret: GitHub and Gitea sign
    with it, GitLab sends it as its token), branches (names, or a
    comma-separated text; default: the repository's default branch),
    bot_account (the login acting for commits whose author has no account),
    hash_references (true: "#12" names bug 12).
    Returns {"id"}.
    Errors: 410; 304; 50 forge, repository or secret missing; 51 unknown
    bot account; 32000 a value that is not valid, or a repository already
    registered.
    """
    p = Params(params)
    repository_id = repository.create(ctx, p.str("forge"), p.str("repository"), p.get("secret"),
                                      p.get("branches"), p.str("bot_account"),
                                      p.bool("hash_references"))
    return {"id": repository_id}


def update(ctx, params):
    """Change registered repositories.

    params: ids (the path gives one); any of repository, secret, branches,
    bot_account (empty: none), hash_references.
    Returns {"forge_repositories": [{"id", "changes"}]}.
    Errors: 410; 304; 50 no ids; 51 unknown repository or bot account; 52 a
    bad id; 32000 as in create.
    """
    p = Params(params)
    ids = p.id_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the repositories to change "
                                                 "(ids).")
    given = {name: params[name] for name in _CHANGEABLE if name in params}
    return {"forge_repositories": [{"id": repository_id,
                                    "changes": repository.update(ctx, repository_id, given)}
                                   for repository_id in ids]}


def delete(ctx, params):
    """Remove registered repositories; their events are refused from then on.

    params: ids (the path gives one).
    Returns {"forge_repositories": [{"id"}]}.
    Errors: 410; 304; 50 no ids; 51 unknown repository; 52 a bad id.
    """
    ids = Params(params).id_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the repositories to remove "
                                                 "(ids).")
    for repository_id in ids:
        repository.delete(ctx, repository_id)
    return {"forge_repositories": [{"id": repository_id} for repository_id in ids]}
