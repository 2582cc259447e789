"""Web pages for people: a third way in over the operations table, beside
REST and RPC. Server-rendered HTML that works without JavaScript, under
Bugzilla's own paths, so the links teams kept (show_bug.cgi, buglist.cgi,
enter_bug.cgi, attachment.cgi, show_activity.cgi, query.cgi, index.cgi)
keep working."""

import falcon

from ..landing import wants_page
from . import (
    account,
    admin,
    admin_audit,
    admin_classifications,
    admin_fields,
    admin_flagtypes,
    admin_params,
    admin_sanity,
    admin_workflow,
    attachment,
    bug,
    buglist,
    chart,
    comment,
    dependency,
    help,
    home,
    missing,
    oidc,
    people,
    prefs,
    report,
    request,
    sudo,
    team,
    whine,
)
from .site import Site


class _BrowserHome:
    """GET /: the home page for browsers; JSON clients keep the 404 error
    object any unknown path gives them."""

    def __init__(self, page):
        self.page = page

    def on_get(self, req, resp):
        if not wants_page(req):
            raise falcon.HTTPNotFound()
        self.page.on_get(req, resp)


def register(app, runner, config):
    """Add the pages to falcon App `app`; returns the Site."""
    site = Site(runner, config)
    index = home.Home(site)
    app.add_route("/", _BrowserHome(index))
    routes = {
        "/index.cgi": index,
        "/static/{name}": home.Static(site),
        "/login": account.Login(site),
        "/logout": account.Logout(site),
        "/relogin.cgi": sudo.Relogin(site),
        "/token.cgi": account.Token(site),
        "/createaccount.cgi": account.CreateAccount(site),
        "/buglist.cgi": buglist.BugList(site),
        "/query.cgi": buglist.Query(site),
        "/show_bug.cgi": bug.ShowBug(site),
        "/process_bug.cgi": bug.ProcessBug(site),
        "/show_activity.cgi": bug.ShowActivity(site),
        "/enter_bug.cgi": bug.EnterBug(site),
        "/post_bug.cgi": bug.PostBug(site),
        "/editcomment.cgi": comment.EditComment(site),
        "/attachment.cgi": attachment.Attachment(site),
        "/userprefs.cgi": prefs.Preferences(site),
        "/admin.cgi": admin.AdminIndex(site),
        "/editproducts.cgi": admin.Products(site),
        "/editcomponents.cgi": admin.Components(site),
        "/editversions.cgi": admin.Versions(site),
        "/editmilestones.cgi": admin.Milestones(site),
        "/editusers.cgi": admin.Users(site),
        "/editgroups.cgi": admin.Groups(site),
        "/editparams.cgi": admin_params.Parameters(site),
        "/editoidc.cgi": oidc.EditProviders(site),
        "/oidc/login": oidc.Start(site),
        "/oidc/callback": oidc.Callback(site),
        "/editkeywords.cgi": admin.Keywords(site),
        "/auditlog.cgi": admin_audit.AuditLog(site),
        "/editflagtypes.cgi": admin_flagtypes.FlagTypes(site),
        "/editfields.cgi": admin_fields.Fields(site),
        "/editvalues.cgi": admin_workflow.Values(site),
        "/editworkflow.cgi": admin_workflow.Workflow(site),
        "/editforges.cgi": admin.Forges(site),
        "/editclassifications.cgi": admin_classifications.Classifications(site),
        "/sanitycheck.cgi": admin_sanity.SanityCheck(site),
        "/page.cgi": help.Help(site),
        "/report.cgi": report.Report(site),
        "/chart.cgi": chart.Chart(site),
        "/duplicates.cgi": team.Duplicates(site),
        "/summarize_time.cgi": team.SummarizeTime(site),
        "/showdependencytree.cgi": dependency.DependencyTree(site),
        "/showdependencygraph.cgi": dependency.DependencyGraph(site),
        "/request.cgi": request.RequestQueue(site),
        "/editwhines.cgi": whine.EditWhines(site),
        "/user_match.cgi": people.UserMatch(site),
    }
    for path, resource in routes.items():
        app.add_route(path, resource)
    # Asked only when no route matched; never for the interface's addresses.
    app.add_sink(missing.Missing(site), prefix=missing.ADDRESSES)
    return site


def attachment_origin(site):
    """The middleware that serves the attachment_base origin."""
    return attachment.AttachmentOrigin(site)


class AttachmentOriginLater:
    """The attachment_base middleware, made before the pages' Site exists
    (falcon takes middleware when the App is made); does nothing until
    `site` is set."""

    def __init__(self):
        self._origin = None

    @property
    def site(self):
        return self._origin.site if self._origin else None

    @site.setter
    def site(self, site):
        self._origin = attachment.AttachmentOrigin(site)

    def process_request(self, req, resp):
        if self._origin is not None:
            self._origin.process_request(req, resp)
