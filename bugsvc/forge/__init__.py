"""Code forges (GitHub, GitLab, Gitea/Forgejo) linked to bugs, a bugsvc
extension: registered repositories (repository.py) and what their webhook
deliveries say (events.py). The receivers at /hooks/<forge> are a way in
(bugsvc/web/hooks.py)."""
