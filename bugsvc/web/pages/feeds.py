"""Bugs as the reference's machine-readable pages: a bug's XML
(show_bug.cgi?ctype=xml, the format of Bugzilla's bugzilla.dtd) and a bug
list as an Atom feed (buglist.cgi?ctype=atom, and ctype=rss, which the
reference answers with the same feed).

Both are built from what the operations answer the visitor (Bug.get,
Bug.comments, Bug.attachments, Bug.search), so they show exactly what the
bug page and the bug list would: private comments and attachments only to
insiders, time fields only to the time-tracking group, a bug the visitor
may not see only as the reference's error element naming the number the
address asked for.
"""

import re
from datetime import datetime, timezone
from xml.sax.saxutils import escape, quoteattr

from ... import COMPATIBLE_VERSION, errors
from ...errors import ServiceError
from .render import field_label


XML_TYPE = "application/xml; charset=UTF-8"
ATOM_TYPE = "application/atom+xml; charset=UTF-8"
# Characters XML 1.0 cannot carry (the reference drops them too).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# The reference's error names for a bug a show_bug.cgi?ctype=xml address
# names but the visitor does not get.
_BUG_ERRORS = {errors.IMPROPER_BUG_ID: "InvalidBugId", errors.BUG_DOES_NOT_EXIST: "NotFound",
               errors.BUG_ACCESS_DENIED: "NotPermitted"}
# The bug's fields, in the reference's order: (its element, the bug
# object's key). Lists give one element per value; people carry their name.
_XML_FIELDS = (
    ("bug_id", "id"), ("alias", "alias"), ("creation_ts", "creation_time"),
    ("short_desc", "summary"), ("delta_ts", "last_change_time"),
    ("reporter_accessible", "is_creator_accessible"),
    ("cclist_accessible", "is_cc_accessible"), ("classification", "classification"),
    ("product", "product"), ("component", "component"), ("version", "version"),
    ("rep_platform", "platform"), ("op_sys", "op_sys"), ("bug_status", "status"),
    ("resolution", "resolution"), ("dup_id", "dupe_of"), ("see_also", "see_also"),
    ("bug_file_loc", "url"), ("status_whiteboard", "whiteboard"), ("keywords", "keywords"),
    ("priority", "priority"), ("bug_severity", "severity"),
    ("target_milestone", "target_milestone"), ("dependson", "depends_on"),
    ("blocked", "blocks"), ("everconfirmed", "is_confirmed"), ("reporter", "creator_detail"),
    ("assigned_to", "assigned_to_detail"), ("cc", "cc"), ("estimated_time", "estimated_time"),
    ("remaining_time", "remaining_time"), ("actual_time", "actual_time"),
    ("deadline", "deadline"), ("qa_contact", "qa_contact_detail"))
# Names a field= or excludefield= of the address may give besides the
# elements: the reference's groups of elements.
_SECTIONS = ("long_desc", "attachment", "attachmentdata", "flag", "group", "token")
MOST_XML_BUGS = 500


def xml_text(value):
    return escape(_NOT_XML.sub("", str(value)))


def xml_attr(value):
    return quoteattr(_NOT_XML.sub("", str(value)))


def xml_time(value):
    """'2026-04-05 06:07:08 +0000' for an API time, as the reference's XML."""
    text = str(value or "")
    if len(text) == 20 and text.endswith("Z"):
        return f"{text[:10]} {text[11:19]} +0000"
    return text


def urlbase(call):
    """The installation's address, ending in "/" (the parameter urlbase, or
    the address this request came to)."""
    base = call.setting("urlbase") or (call.req.prefix + "/")
    return base if base.endswith("/") else base + "/"


def _wanted(call):
    """The predicate of the elements and sections the address asks for
    (field=..., excludefield=...; everything by default)."""
    only = set(call.fields("field"))
    left_out = set(call.fields("excludefield"))

    def wanted(name):
        return (not only or name in only) and name not in left_out
    return wanted


def bug_xml(call):
    """Answer show_bug.cgi?ctype=xml: the bugs the `id` values name, each
    as the visitor sees it or as an error element. Errors: 32000 for more
    than MOST_XML_BUGS ids."""
    references = [str(value).strip().lstrip("#") for value in call.fields("id")
                  if str(value).strip()]
    if len(references) > MOST_XML_BUGS:
        raise ServiceError(errors.USER_ERROR,
                           f"At most {MOST_XML_BUGS} bugs can be exported at once.")
    wanted = _wanted(call)
    found = {"bugs": [], "faults": []}
    if references:
        found = call.read_one("Bug.get", {"ids": references, "permissive": True,
                                          "include_fields": "_default,see_also"})
    call.whoami()
    bugs = {str(bug["id"]): bug for bug in found["bugs"]}
    bugs.update((str(bug["alias"][0]), bug) for bug in found["bugs"] if bug.get("alias"))
    faults = {str(fault["id"]): fault for fault in found["faults"]}
    ids = [bug["id"] for bug in found["bugs"]]
    comments, attachments = {}, {}
    if ids and (wanted("long_desc") or wanted("attachment")):
        exclude = "" if wanted("attachmentdata") else "data"
        read_comments, read_attachments = call.read(
            ("Bug.comments", {"ids": ids}),
            ("Bug.attachments", {"ids": ids, "exclude_fields": exclude}))
        comments = {key: value["comments"] for key, value in read_comments["bugs"].items()}
        attachments = read_attachments["bugs"]
    group_ids = _group_ids(call, found["bugs"]) if wanted("group") else {}
    names = _real_names(call, [comment["creator"] for found_comments in comments.values()
                               for comment in found_comments]
                        + [attachment["creator"] for found_attachments in attachments.values()
                           for attachment in found_attachments])
    user = call.user
    out = ['<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>',
           f'<!DOCTYPE bugzilla SYSTEM {xml_attr(urlbase(call) + "page.cgi?id=bugzilla.dtd")}>',
           f'<bugzilla version={xml_attr(COMPATIBLE_VERSION)} urlbase={xml_attr(urlbase(call))}'
           f' maintainer={xml_attr(call.setting("maintainer"))}'
           + (f' exporter={xml_attr(user["login"])}' if user else "") + ">"]
    for reference in references:
        bug = bugs.get(reference)
        if bug is None:
            fault = faults.get(reference, {})
            name = _BUG_ERRORS.get(fault.get("faultCode"), "NotFound")
            out.append(f"  <bug error={xml_attr(name)}>\n    <bug_id>{xml_text(reference)}"
                       "</bug_id>\n  </bug>")
            continue
        out.append(_one_bug(bug, comments.get(str(bug["id"]), []),
                            attachments.get(str(bug["id"]), []), wanted, user is not None,
                            group_ids, names))
    out.append("</bugzilla>\n")
    call.resp.content_type = XML_TYPE
    call.resp.set_header("X-Content-Type-Options", "nosniff")
    call.resp.set_header("Cache-Control", "no-store" if call.token else "no-cache")
    call.resp.data = "\n".join(out).encode("utf-8")


def _group_ids(call, bugs):
    """{group name: id} of the groups `bugs` are in: as Bugzilla's bug XML,
    every group of a bug is named with its id to whoever sees the bug."""
    grouped = [bug["id"] for bug in bugs if bug.get("groups")]
    if not grouped:
        return {}
    found = call.read_one("Bug.groups_in", {"ids": grouped})
    return {group["name"]: group["id"] for bug in found["bugs"] for group in bug["groups"]}


_MOST_NAMED = 200


def _real_names(call, logins):
    """{login: real name} of the people named (the `name` attribute of
    Bugzilla's who and attacher), as User.get shows them to the visitor."""
    wanted = sorted({login for login in logins if login and "@" in login})
    if not wanted:
        return {}
    users = []
    try:
        users = call.read_one("User.get", {"names": wanted,
                                           "include_fields": "name,real_name"})["users"]
    except ServiceError:                # one the visitor may not look up: each on its own
        for login in wanted[:_MOST_NAMED]:
            try:
                users += call.read_one("User.get", {"names": [login],
                                                    "include_fields": "name,real_name"})["users"]
            except ServiceError:
                continue
    return {user["name"]: user.get("real_name") or "" for user in users}


def _element(name, value, person=None):
    attributes = f" name={xml_attr(person)}" if person else ""
    return f"    <{name}{attributes}>{xml_text(value)}</{name}>"


def _one_bug(bug, comments, attachments, wanted, signed_in, group_ids, names):
    lines = ["  <bug>"]
    for element, key in _XML_FIELDS:
        if key not in bug or not wanted(element):
            continue
        value = bug[key]
        if value is None or value == "" and element in ("dup_id", "deadline"):
            continue
        if key.endswith("_detail"):
            if value:
                lines.append(_element(element, value.get("email") or value.get("name", ""),
                                      value.get("real_name") or None))
        elif element == "keywords":
            lines.append(_element(element, ", ".join(value)))
        elif isinstance(value, list):
            lines.extend(_element(element, item) for item in value)
        elif isinstance(value, bool):
            lines.append(_element(element, int(value)))
        elif element in ("creation_ts", "delta_ts"):
            lines.append(_element(element, xml_time(value)))
        else:
            lines.append(_element(element, value))
    for key in sorted(key for key in bug if key.startswith("cf_")):
        if wanted(key):
            value = bug[key]
            for item in value if isinstance(value, list) else [value]:
                lines.append(_element(key, "" if item is None else item))
    if signed_in and wanted("token") and bug.get("update_token"):
        lines.append(_element("token", bug["update_token"]))
    if wanted("group"):
        for name in bug.get("groups", []):
            known = group_ids.get(name)
            attribute = f' id="{int(known)}"' if known is not None else ""
            lines.append(f"    <group{attribute}>{xml_text(name)}</group>")
    if wanted("flag"):
        lines.extend(_flags(bug.get("flags", []), "    "))
    if wanted("long_desc"):
        for comment in comments:
            lines.append(f'    <long_desc isprivate="{int(bool(comment["is_private"]))}">')
            lines.append(f'      <commentid>{int(comment["id"])}</commentid>')
            lines.append(f'      <comment_count>{int(comment["count"])}</comment_count>')
            if comment.get("attachment_id"):
                lines.append(f'      <attachid>{int(comment["attachment_id"])}</attachid>')
            lines.append(_person("who", comment["creator"], names, "      "))
            lines.append(f'      <bug_when>{xml_text(xml_time(comment["creation_time"]))}'
                         '</bug_when>')
            if comment.get("work_time"):
                lines.append(f'      <work_time>{float(comment["work_time"]):.2f}</work_time>')
            lines.append(f'      <thetext>{xml_text(comment["text"] or "")}</thetext>')
            lines.append("    </long_desc>")
    if wanted("attachment"):
        for attachment in attachments:
            lines.append(f'    <attachment isobsolete="{int(bool(attachment["is_obsolete"]))}"'
                         f' ispatch="{int(bool(attachment["is_patch"]))}"'
                         f' isprivate="{int(bool(attachment["is_private"]))}">')
            for element, value in (
                    ("attachid", attachment["id"]),
                    ("date", xml_time(attachment["creation_time"])),
                    ("delta_ts", xml_time(attachment["last_change_time"])),
                    ("desc", attachment["summary"]), ("filename", attachment["file_name"]),
                    ("type", attachment["content_type"]), ("size", attachment["size"])):
                lines.append(f"      <{element}>{xml_text(value)}</{element}>")
            lines.append(_person("attacher", attachment["creator"], names, "      "))
            if "data" in attachment and wanted("attachmentdata"):
                lines.append(f'      <data encoding="base64">{xml_text(attachment["data"])}'
                             "</data>")
            if wanted("flag"):
                lines.extend(_flags(attachment.get("flags", []), "      "))
            lines.append("    </attachment>")
    lines.append("  </bug>")
    return "\n".join(lines)


def _person(element, login, names, indent):
    """<who name="Real Name">login</who>, as Bugzilla writes people."""
    real_name = names.get(login)
    attribute = f" name={xml_attr(real_name)}" if real_name else ""
    return f"{indent}<{element}{attribute}>{xml_text(login)}</{element}>"


def _flags(flags, indent):
    lines = []
    for flag in flags:
        requestee = (f" requestee={xml_attr(flag['requestee'])}"
                     if flag.get("status") == "?" and flag.get("requestee") else "")
        lines.append(f"{indent}<flag name={xml_attr(flag['name'])} id=\"{int(flag['id'])}\""
                     f" type_id=\"{int(flag['type_id'])}\" status={xml_attr(flag['status'])}"
                     f" setter={xml_attr(flag['setter'])}{requestee}/>")
    return lines


# The bug list as a feed -------------------------------------------------------------------

# The bug object's fields a feed entry shows, in the reference's order.
FEED_FIELDS = ("id", "summary", "product", "component", "assigned_to_detail", "creator_detail",
               "status", "resolution", "priority", "severity", "target_milestone",
               "creation_time", "last_change_time")


def _name_of(person):
    person = person or {}
    return person.get("real_name") or person.get("email") or person.get("name") or ""


def atom(call, bugs, query_string, title):
    """Answer buglist.cgi?ctype=atom with bugs `bugs` (bug objects with
    FEED_FIELDS) of the list whose query string (without ctype and
    credentials) is `query_string`."""
    base = urlbase(call)
    plain_query = query_string
    feed_query = "&".join(part for part in ("ctype=atom", plain_query) if part)
    times = sorted(bug["last_change_time"] for bug in bugs)
    updated = times[-1] if times else datetime.fromtimestamp(0, timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    milestones = call.setting_is_on("usetargetmilestone")
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<feed xmlns="http://www.w3.org/2005/Atom">',
           f"  <title>{xml_text(title)}</title>",
           '  <link rel="alternate" type="text/html" href='
           f'{xml_attr(base + "buglist.cgi?" + plain_query)}/>',
           '  <link rel="self" type="application/atom+xml" href='
           f'{xml_attr(base + "buglist.cgi?" + feed_query)}/>',
           f"  <updated>{xml_text(updated)}</updated>",
           f"  <id>{xml_text(base + 'buglist.cgi?' + feed_query)}</id>"]
    for bug in bugs:
        address = f"{base}show_bug.cgi?id={int(bug['id'])}"
        rows = [("Product", bug["product"]), ("Component", bug["component"]),
                ("Assignee", _name_of(bug.get("assigned_to_detail"))),
                ("Reporter", _name_of(bug.get("creator_detail"))),
                ("Status", bug["status"]), ("Resolution", bug.get("resolution") or ""),
                ("Priority", bug["priority"]), ("Severity", bug["severity"])]
        if milestones:
            rows.append((field_label("target_milestone"), bug["target_milestone"]))
        rows += [("Opened", bug["creation_time"]), ("Changed", bug["last_change_time"])]
        table = "<table><tr><th>Field</th><th>Value</th></tr>" + "".join(
            f"<tr><td>{escape(label)}</td><td>{escape(str(value))}</td></tr>"
            for label, value in rows) + "</table>"
        title_text = f"[Bug {int(bug['id'])}] {bug['summary']}"
        out += ["  <entry>",
                f"    <title>{xml_text(title_text)}</title>",
                f'    <link rel="alternate" type="text/html" href={xml_attr(address)}/>',
                f"    <id>{xml_text(address)}</id>",
                f"    <author>\n      <name>{xml_text(_name_of(bug.get('creator_detail')))}"
                "</name>\n    </author>",
                f"    <updated>{xml_text(bug['last_change_time'])}</updated>",
                f'    <summary type="html">{xml_text(table)}</summary>',
                "  </entry>"]
    out.append("</feed>\n")
    call.resp.content_type = ATOM_TYPE
    call.resp.set_header("X-Content-Type-Options", "nosniff")
    call.resp.set_header("Cache-Control", "no-store" if call.token else "no-cache")
    call.resp.data = "\n".join(out).encode("utf-8")
