"""The request queue (request.cgi): the flags requested of someone, or by
someone, or of anyone, filtered by flag type, product, component,
requester, requestee and status, grouped by requestee, requester, flag
type or product and component as the reference groups them. Read through
Bug.request_queue, which lists only flags on bugs (and attachments) the
visitor may see."""

from .base import Page, require_user, responder
from .site import url


# The reference's grouping choices (its `group` values) and their headings.
GROUPS = {"requestee": "Requestee", "requester": "Requester", "type": "Flag",
          "category": "Product: Component"}
_STATUSES = (("?", "requested (?)"), ("+", "granted (+)"), ("-", "denied (-)"),
             ("+-", "granted or denied"), ("all", "any status"))


def group_key(request, group):
    """The heading request `request` is listed under when grouped by `group`."""
    if group == "category":
        return f"{request['product']}: {request['component']}"
    if group == "type":
        return request["name"]
    return request[group] or "(anyone)"


class RequestQueue(Page):
    """GET /request.cgi: the queue's form; with action=queue, the flags it
    asks for (the reference's "My Requests" link is
    request.cgi?action=queue&requester=LOGIN&requestee=LOGIN&do_union=1)."""

    @responder
    def on_get(self, call):
        user = require_user(call)
        chosen = {name: call.field(name).strip() for name in (
            "requester", "requestee", "product", "component", "type", "status", "group")}
        chosen["do_union"] = bool(call.field("do_union")) and call.field("do_union") != "0"
        group = chosen["group"] if chosen["group"] in GROUPS else "requestee"
        chosen["group"] = group
        chosen["status"] = chosen["status"] or "?"
        reads = [("Product.get", {"type": "selectable", "include_fields": "name"}),
                 ("Bug.request_types", {})]
        queued = call.field("action") == "queue"
        if queued:
            reads.append(("Bug.request_queue", {
                "requester": chosen["requester"], "requestee": chosen["requestee"],
                "do_union": chosen["do_union"], "product": chosen["product"],
                "component": chosen["component"], "type": chosen["type"],
                "status": chosen["status"]}))
        results = call.read(*reads)
        products = [product["name"] for product in results[0]["products"]]
        groups = []
        if queued:
            by_key = {}
            for request in results[2]["requests"]:
                by_key.setdefault(group_key(request, group), []).append(request)
            groups = sorted(by_key.items(), key=lambda item: item[0].lower())
        types = results[1]["types"]
        if chosen["type"] and chosen["type"] != "all" and chosen["type"] not in types:
            types = [chosen["type"]] + types
        login = user["login"]
        call.render("request_queue.html", title="Request queue", chosen=chosen,
                    products=products, types=types,
                    statuses=_STATUSES, group_names=GROUPS,
                    groups=groups, queued=queued,
                    mine_url=url("/request.cgi", action="queue", requester=login,
                                 requestee=login, do_union=1, group="type"))
