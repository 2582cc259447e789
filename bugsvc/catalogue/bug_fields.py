"""The one list of bug fields, as Bugzilla keeps one (the defaults of its
Field.pm): every standard field with the names it goes by, its label, its
type, who may see it, how search reads it, whether a bug list shows it, and
how mail, webhooks and the importer name it. Search and quicksearch, filing
and updating bugs, the field definitions (Bug.fields) and the install data,
the web pages, bug mail, webhooks and the importer all take their tables
from here; a custom field (cf_*, a row of the fields table) takes what its
type says from CUSTOM_KINDS.

The names of a field:

- `name`: Bugzilla's, as its fields table, search criteria, bug-list
  columns and quicksearch know it (short_desc);
- `api`: the interface's, where Bugzilla's WebService renames the field
  (summary); Bug.search, Bug.create and Bug.update take it, and `changes`
  and a bug's history report it;
- `bug_key`: the key of the bug object that shows it, where that is not
  `api` (flags for flagtypes.name, actual_time for work_time);
- `history`: the name of its rows in a bug's history, when bugsvc writes
  any (None: never written).

This module is data: it reads nothing and imports only the type codes.
"""

from dataclasses import dataclass

from .field_types import (
    BUG_ID,
    BUG_URLS,
    DATE,
    DATETIME,
    FREETEXT,
    INTEGER,
    KEYWORDS,
    MULTI_SELECT,
    SINGLE_SELECT,
    TEXTAREA,
    UNKNOWN,
)


# How search compares a field's values: as text, as a number, as a moment,
# as an account's login, or as a legal value of a select field (matched
# exactly after case-folding).
TEXT, NUMBER, DATE_KIND, USER, SELECT = "text", "number", "date", "user", "select"


@dataclass(frozen=True)
class ListColumn:
    """A field's column in a bug list: its place among the columns the list
    offers (`order`), and its name in a list's address (`columnlist`,
    `order`) when that is not the field's name."""
    order: int
    name: str | None = None


@dataclass(frozen=True)
class BugField:
    """One standard bug field.

    name, api_name, shown_as, history: its names (see the module's
    docstring); api_name and shown_as only where they differ.
    search: how search compares its values (TEXT, NUMBER, DATE_KIND, USER,
    SELECT). column: the column of the bugs table that search reads as it
    is (None: search_sql joins or computes the value).
    param_names: further names Bug.search takes as a parameter for it
    (tags for tag). old_names: further names search criteria and sort
    orders take (opendate for creation_ts), and the names an older
    reference gave it (dup_id).
    description, sort_key, type, mandatory: its row in the fields table
    (Bug.fields' display_name, sort_key, type, is_mandatory); no row when
    description is None.
    label: what the web pages call it (None: its name, readably).
    timetracking: only members of the time-tracking group see it, search
    it or see its history.
    parameter: the installation parameter that turns it off (while off,
    the form for filing a bug and the mail of a new bug leave it out; the
    interface takes and shows it whatever the parameter says).
    pages_follow_parameter: the bug page and the bug list also leave it
    out while its parameter is off (they keep the QA contact and target
    milestone a bug has).
    on_create, on_update: Bug.create, Bug.update set it on the bug; both
    also take it under its Bugzilla names (`name`, `old_names`), except
    update for the fields whose setter takes the API name only
    (update_takes_api_name).
    quicksearch: its short names in a quick search; quicksearch_by_name:
    its own name works there too (not for those whose short name is the
    one people use, so that prefixes stay unambiguous).
    list_column: where a bug list offers it (None: not a column).
    new_bugmail: its place among the fields of a new bug's mail (None: not
    there); mail_label: its label there when not `label`.
    webhook_change: its name in a webhook's changes when not `history`.
    attachment_key: for a field of an attachment, the attachment object's key.
    catalogue_values: its legal values are the catalogue's rows (products,
    components, classifications), not rows of field_values.
    per_product: its legal values belong to a product.
    report_axis: a report (report.cgi) may count bugs by its values along
    an axis (time-tracking fields for the members of the time-tracking
    group only; a field whose parameter is off only while the pages show
    it).
    """
    name: str
    search: str
    description: str | None = None
    sort_key: int = 0
    type: int = UNKNOWN
    mandatory: bool = False
    api_name: str | None = None
    shown_as: str | None = None
    param_names: tuple = ()
    old_names: tuple = ()
    label: str | None = None
    column: str | None = None
    history: str | None = None
    timetracking: bool = False
    parameter: str | None = None
    pages_follow_parameter: bool = True
    on_create: bool = False
    on_update: bool = False
    update_takes_api_name: bool = False
    quicksearch: tuple = ()
    quicksearch_by_name: bool = True
    list_column: ListColumn | None = None
    new_bugmail: int | None = None
    mail_label: str | None = None
    webhook_change: str | None = None
    attachment_key: str | None = None
    catalogue_values: bool = False
    per_product: bool = False
    report_axis: bool = False

    @property
    def api(self):
        """Its name over the interface."""
        return self.api_name or self.name

    @property
    def bug_key(self):
        """The key of the bug object that shows it."""
        return self.shown_as or self.api

    @property
    def bugzilla_names(self):
        """Its name and the older names the reference takes for it."""
        return (self.name,) + self.old_names

    @property
    def list_name(self):
        """Its name as a bug-list column (None: not a column)."""
        if self.list_column is None:
            return None
        return self.list_column.name or self.name


def _sort(position):
    # The reference numbers its standard fields 50 apart, in its own order.
    return position * 50


_F = BugField
# In the order search lists them (its simple parameters are read in this
# order); the fields table's order is sort_key.
STANDARD = (
    _F("bug_id", NUMBER, "Bug #", _sort(1), api_name="id", label="Bug", column="id",
       list_column=ListColumn(1), new_bugmail=1, mail_label="Bug ID"),
    _F("short_desc", TEXT, "Summary", _sort(2), mandatory=True, api_name="summary",
       label="Summary", column="summary", history="summary", on_create=True, on_update=True,
       update_takes_api_name=True, quicksearch=("summary",), list_column=ListColumn(3),
       new_bugmail=2),
    _F("classification", TEXT, "Classification", _sort(3), SINGLE_SELECT,
       label="Classification", list_column=ListColumn(8), catalogue_values=True, report_axis=True),
    _F("product", TEXT, "Product", _sort(4), SINGLE_SELECT, mandatory=True, label="Product",
       column="product_id", history="product", on_create=True, on_update=True,
       quicksearch=("product",), list_column=ListColumn(6), new_bugmail=3,
       catalogue_values=True, report_axis=True),
    _F("component", TEXT, "Component", _sort(15), SINGLE_SELECT, mandatory=True,
       label="Component", column="component_id", history="component", on_create=True,
       on_update=True, quicksearch=("component",), list_column=ListColumn(7), new_bugmail=11,
       catalogue_values=True, per_product=True, report_axis=True),
    _F("version", TEXT, "Version", _sort(5), mandatory=True, label="Version", column="version",
       history="version", on_create=True, on_update=True, quicksearch=("version",),
       list_column=ListColumn(9), new_bugmail=4, per_product=True, report_axis=True),
    _F("target_milestone", TEXT, "Target Milestone", _sort(32), label="Target Milestone",
       column="target_milestone", history="target_milestone", parameter="usetargetmilestone",
       pages_follow_parameter=False, on_create=True, on_update=True,
       quicksearch=("milestone",), list_column=ListColumn(10), new_bugmail=21,
       per_product=True, report_axis=True),
    _F("rep_platform", SELECT, "Platform", _sort(6), SINGLE_SELECT, api_name="platform",
       label="Hardware", column="platform", history="platform", on_create=True,
       on_update=True, update_takes_api_name=True, quicksearch=("platform",),
       quicksearch_by_name=False, list_column=ListColumn(11), new_bugmail=5, report_axis=True),
    _F("op_sys", SELECT, "OS/Version", _sort(8), SINGLE_SELECT, label="OS", column="op_sys",
       history="op_sys", on_create=True, on_update=True, quicksearch=("os",),
       list_column=ListColumn(12), new_bugmail=6, report_axis=True),
    _F("bug_status", SELECT, "Status", _sort(9), SINGLE_SELECT, api_name="status",
       label="Status", column="status", history="status", on_create=True, on_update=True,
       quicksearch=("status",), quicksearch_by_name=False, list_column=ListColumn(4),
       new_bugmail=7, report_axis=True),
    _F("resolution", SELECT, "Resolution", _sort(12), SINGLE_SELECT, label="Resolution",
       column="resolution", history="resolution", on_create=True, on_update=True,
       list_column=ListColumn(5), new_bugmail=8, report_axis=True),
    _F("bug_severity", SELECT, "Severity", _sort(13), SINGLE_SELECT, api_name="severity",
       label="Severity", column="severity", history="severity", on_create=True,
       on_update=True, update_takes_api_name=True, quicksearch=("severity",),
       quicksearch_by_name=False, list_column=ListColumn(14), new_bugmail=9, report_axis=True),
    _F("priority", SELECT, "Priority", _sort(14), SINGLE_SELECT, label="Priority",
       column="priority", history="priority", on_create=True, on_update=True,
       list_column=ListColumn(13), new_bugmail=10, report_axis=True),
    _F("bug_file_loc", TEXT, "URL", _sort(7), api_name="url", label="URL", column="url",
       history="url", on_create=True, on_update=True, update_takes_api_name=True,
       quicksearch=("url",), quicksearch_by_name=False, list_column=ListColumn(20),
       new_bugmail=18),
    _F("status_whiteboard", TEXT, "Status Whiteboard", _sort(10), api_name="whiteboard",
       label="Whiteboard", column="whiteboard", history="whiteboard",
       parameter="usestatuswhiteboard", on_create=True, on_update=True,
       quicksearch=("whiteboard", "sw"), quicksearch_by_name=False, list_column=ListColumn(21),
       new_bugmail=20, report_axis=True),
    _F("assigned_to", USER, "AssignedTo", _sort(16), label="Assignee", column="assigned_to",
       history="assigned_to", on_create=True, on_update=True,
       quicksearch=("assignee", "owner"), list_column=ListColumn(15), new_bugmail=12,
       report_axis=True),
    _F("reporter", USER, "ReportedBy", _sort(17), api_name="creator", label="Reporter",
       column="reporter", on_create=True, quicksearch=("reporter",),
       list_column=ListColumn(17), new_bugmail=13, report_axis=True),
    _F("qa_contact", USER, "QAContact", _sort(18), label="QA Contact", column="qa_contact",
       history="qa_contact", parameter="useqacontact", pages_follow_parameter=False,
       on_create=True, on_update=True, quicksearch=("qa", "qacontact"),
       list_column=ListColumn(19), new_bugmail=14, report_axis=True),
    _F("assigned_to_realname", TEXT, "AssignedToName", _sort(19),
       shown_as="assigned_to_detail", list_column=ListColumn(16)),
    _F("reporter_realname", TEXT, "ReportedByName", _sort(20), shown_as="creator_detail",
       list_column=ListColumn(18)),
    _F("qa_contact_realname", TEXT, "QAContactName", _sort(21), shown_as="qa_contact_detail"),
    _F("creation_ts", DATE_KIND, "Creation date", _sort(33), api_name="creation_time",
       old_names=("opendate",), label="Opened", column="creation_time",
       list_column=ListColumn(24, "opendate")),
    _F("delta_ts", DATE_KIND, "Last changed date", _sort(34), api_name="last_change_time",
       old_names=("changeddate",), label="Changed", column="last_change_time",
       list_column=ListColumn(23, "changeddate")),
    _F("everconfirmed", NUMBER, "Ever Confirmed", _sort(39), api_name="is_confirmed",
       label="Confirmed", column="is_confirmed", history="is_confirmed"),
    # The bug a duplicate duplicates: the reference has no field for it
    # (Bug.update takes it as dup_id).
    _F("dupe_of", NUMBER, old_names=("dup_id",), label="Duplicate of", column="dupe_of",
       on_update=True),
    _F("reporter_accessible", NUMBER, "Reporter Accessible", _sort(40),
       api_name="is_creator_accessible", label="Reporter accessible",
       column="is_creator_accessible", history="is_creator_accessible", on_create=True,
       on_update=True, quicksearch_by_name=False),
    _F("cclist_accessible", NUMBER, "CC Accessible", _sort(41), api_name="is_cc_accessible",
       label="CC list accessible", column="is_cc_accessible", history="is_cc_accessible",
       on_create=True, on_update=True, quicksearch_by_name=False),
    _F("estimated_time", NUMBER, "Estimated Hours", _sort(43), label="Orig. Est.",
       column="estimated_time", history="estimated_time", timetracking=True, on_create=True,
       on_update=True, list_column=ListColumn(27), new_bugmail=23,
       mail_label="Estimated Hours", report_axis=True),
    _F("remaining_time", NUMBER, "Remaining Hours", _sort(44), label="Hours Left",
       column="remaining_time", history="remaining_time", timetracking=True, on_create=True,
       on_update=True, list_column=ListColumn(28), report_axis=True),
    _F("deadline", DATE_KIND, "Deadline", _sort(45), DATETIME, label="Deadline",
       column="deadline", history="deadline", timetracking=True, on_create=True,
       on_update=True, list_column=ListColumn(26), new_bugmail=24, report_axis=True),
    # Hours worked come with comments (Bug.update's work_time); the bug
    # object shows their sum.
    _F("work_time", NUMBER, "Hours Worked", _sort(50), shown_as="actual_time",
       old_names=("actual_time",), label="Hours Worked", history="work_time",
       timetracking=True, list_column=ListColumn(29, "actual_time")),
    _F("percentage_complete", NUMBER, "Percentage Complete", _sort(51), timetracking=True),
    _F("longdescs.count", NUMBER, "Number of Comments", _sort(37), api_name="comment_count",
       label="Comments"),
    _F("days_elapsed", NUMBER, "Days since bug changed", _sort(59), old_names=("changedin",)),
    _F("owner_idle_time", NUMBER, "Time Since Assignee Touched", _sort(54)),
    _F("last_visit_ts", DATE_KIND, "Last Visit", _sort(57), DATETIME),
    _F("content", TEXT, "Content", _sort(52)),
    # Fields with any number of values per bug.
    _F("alias", TEXT, "Alias", _sort(38), label="Alias", history="alias", on_create=True,
       on_update=True, list_column=ListColumn(2), new_bugmail=22),
    _F("keywords", TEXT, "Keywords", _sort(11), KEYWORDS, label="Keywords",
       history="keywords", on_create=True, on_update=True, quicksearch=("kw",),
       list_column=ListColumn(22), new_bugmail=19, report_axis=True),
    _F("cc", USER, "CC", _sort(22), label="CC", history="cc", on_create=True, on_update=True,
       quicksearch=("cc",), new_bugmail=15),
    _F("dependson", NUMBER, "Depends on", _sort(23), api_name="depends_on",
       label="Depends on", history="depends_on", on_create=True, on_update=True,
       new_bugmail=16),
    _F("blocked", NUMBER, "Blocks", _sort(24), api_name="blocks", label="Blocks",
       history="blocks", on_create=True, on_update=True, new_bugmail=17),
    _F("see_also", TEXT, "See Also", _sort(55), BUG_URLS, label="See Also",
       history="see_also", parameter="use_see_also", on_create=True, on_update=True),
    _F("bug_group", TEXT, "Group", _sort(42), shown_as="groups", param_names=("groups",),
       label="Groups", history="groups", on_create=True, on_update=True,
       quicksearch=("group",), quicksearch_by_name=False),
    _F("tag", TEXT, "Personal Tags", _sort(56), KEYWORDS, shown_as="tags",
       param_names=("tags",)),
    _F("longdesc", TEXT, "Comment", _sort(35), param_names=("long_desc",),
       quicksearch=("description", "comment")),
    _F("longdescs.isprivate", NUMBER, "Comment is private", _sort(36),
       history="longdescs.isprivate", webhook_change="longdescs.is_private"),
    _F("commenter", USER, "Commenter", _sort(46)),
    _F("comment_tag", TEXT, "Comment Tag", _sort(58)),
    _F("attachments.description", TEXT, "Attachment description", _sort(25),
       history="attachments.description", attachment_key="summary",
       quicksearch=("attachment", "attachmentdesc", "attachdesc")),
    _F("attachments.filename", TEXT, "Attachment filename", _sort(26),
       history="attachments.filename", attachment_key="file_name"),
    _F("attachments.mimetype", TEXT, "Attachment mime type", _sort(27),
       history="attachments.mimetype", attachment_key="content_type",
       quicksearch=("attachmentmimetype", "attachmimetype")),
    _F("attachments.ispatch", NUMBER, "Attachment is patch", _sort(28),
       history="attachments.ispatch", attachment_key="is_patch"),
    _F("attachments.isobsolete", NUMBER, "Attachment is obsolete", _sort(29),
       history="attachments.isobsolete", attachment_key="is_obsolete"),
    _F("attachments.isprivate", NUMBER, "Attachment is private", _sort(30),
       label="Attachment private", history="attachments.isprivate",
       attachment_key="is_private"),
    _F("attachments.submitter", USER, "Attachment creator", _sort(31)),
    _F("attach_data.thedata", TEXT, "Attachment data", _sort(53),
       old_names=("attachments.thedata",), quicksearch=("attachmentdata", "attachdata")),
    _F("flagtypes.name", TEXT, "Flags", _sort(47), shown_as="flags", label="Flags",
       history="flagtypes.name", on_create=True, on_update=True, quicksearch=("flag",),
       list_column=ListColumn(25)),
    _F("requestees.login_name", USER, "Flag Requestee", _sort(48), quicksearch=("requestee",)),
    _F("setters.login_name", USER, "Flag Setter", _sort(49), quicksearch=("setter",)),
)
del _F

# The standard fields by their interface names.
BY_API_NAME = {field.api: field for field in STANDARD}
# The standard select fields whose legal values are rows of field_values.
SELECTS = tuple(field for field in STANDARD
                if field.type == SINGLE_SELECT and not field.catalogue_values)


@dataclass(frozen=True)
class CustomKind:
    """What a custom field's type says where the type matters.

    search: how search compares its values.
    words_exact: word operators compare whole values (a multiple select's
    values are words). control: the bug page's control for it ("text",
    "select", "multi", "textarea"). shown: how a page shows it to someone
    who may not change it ("text"; "bug": a link to the bug it names).
    """
    search: str = TEXT
    words_exact: bool = False
    control: str = "text"
    shown: str = "text"

    @property
    def is_select(self):
        return self.control in ("select", "multi")


# The types a custom field may have, by the interface's type codes.
CUSTOM_KINDS = {
    FREETEXT: CustomKind(),
    SINGLE_SELECT: CustomKind(control="select"),
    MULTI_SELECT: CustomKind(words_exact=True, control="multi"),
    TEXTAREA: CustomKind(control="textarea"),
    DATETIME: CustomKind(search=DATE_KIND),
    BUG_ID: CustomKind(search=NUMBER, shown="bug"),
    BUG_URLS: CustomKind(),
    KEYWORDS: CustomKind(),
    DATE: CustomKind(search=DATE_KIND),
    INTEGER: CustomKind(search=NUMBER),
}


def custom_kind(code):
    """The CustomKind of custom field type `code` (free text's when unknown)."""
    return CUSTOM_KINDS.get(code) or CUSTOM_KINDS[FREETEXT]


def _names_for_search():
    names = {}
    for field in STANDARD:
        if field.api != field.name:
            names[field.api] = field.name
        names.update((other, field.name) for other in field.param_names)
    return names


# The names Bug.search takes as parameters for a field besides its own:
# its interface name and further parameter names.
PARAM_NAMES = _names_for_search()
# The names search criteria and sort orders take besides a field's own.
SEARCH_NAMES = dict(PARAM_NAMES, **{other: field.name for field in STANDARD
                                    for other in field.old_names})


def bugzilla_name(name):
    """The Bugzilla name of the field called `name` (its own, interface or
    older name, as search reads it); any other name as it is."""
    return SEARCH_NAMES.get(name, name)
