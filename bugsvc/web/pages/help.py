"""Help pages under Bugzilla's address for them, page.cgi?id=NAME, written
for bugsvc: the quick search syntax (quicksearch.html, which clients link
people to and read), the bug fields with this installation's values
(fields.html, whose anchors are the fields' names, as Bugzilla's), and how
to write a good bug report (bug-writing.html). The values shown are those
the operations show the visitor (Bug.fields)."""

from ...bugs.quicksearch import MAPPINGS
from ...catalogue import bug_fields
from . import comment
from .base import Page, responder
from .missing import not_found


# page.cgi ids -> (template, title).
PAGES = {
    "quicksearch.html": ("help_quicksearch.html", "Quick search help"),
    "fields.html": ("help_fields.html", "Bug fields"),
    "bug-writing.html": ("help_bug_writing.html", "Writing a good bug report"),
}
# The select fields whose values the pages list, by their internal names.
_SELECTS = tuple(field.name for field in bug_fields.SELECTS)
# Each field's name over the interface (the bug object's key) where it is
# not its own.
_API_NAMES = {field.name: field.bug_key for field in bug_fields.STANDARD
              if field.bug_key != field.name}


class Help(Page):
    """GET /page.cgi?id=NAME: one of the help pages, or an edited
    comment's earlier texts (404 for any other id)."""

    @responder
    def on_get(self, call):
        page_id = call.query.get("id")
        if isinstance(page_id, list):
            page_id = page_id[0]
        if page_id == "comment-revisions.html":
            return comment.comment_revisions(call)
        if page_id not in PAGES:
            not_found(call, f"There is no help page '{page_id or ''}' here; these are: "
                            + ", ".join(PAGES) + ".")
            return
        template, title = PAGES[page_id]
        found = call.read_one("Bug.fields", {"include_fields": "name,display_name,type,"
                                                               "is_custom,values.name,"
                                                               "values.is_open,"
                                                               "values.can_change_to,"
                                                               "values.is_active"})
        fields = {field["name"]: field for field in found["fields"]}
        values = {name: [value for value in fields.get(name, {}).get("values", [])
                         if value["name"] and value.get("is_active", True)]
                  for name in _SELECTS}
        call.render(template, title=title, values=values, fields=fields,
                    custom=[field for field in found["fields"] if field["is_custom"]],
                    short_names=sorted(MAPPINGS.items()), api_names=_API_NAMES,
                    same_as=[page_id, found])
