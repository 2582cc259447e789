"""The most duplicated bugs (duplicates.cgi) and hours worked per bug and
person (summarize_time.cgi), under Bugzilla's parameters: duplicates.cgi
takes product, bug_id, changedsince, openonly, sortby, reverse, maxrows
and ctype=csv; summarize_time.cgi takes id, do_depends, start_date,
end_date, group_by (number or owner) and ctype=csv. Their operations are
Report.duplicates and Report.time_summary.
"""

import csv
import io

from .base import Page, responder
from .report import csv_safe
from .site import url


DUPLICATE_COLUMNS = (("bug_id", "Bug"), ("dup_count", "Duplicates"), ("delta", "Change"),
                     ("product", "Product"), ("component", "Component"),
                     ("bug_severity", "Severity"), ("op_sys", "OS"),
                     ("target_milestone", "Target Milestone"), ("short_desc", "Summary"))


def _single(value):
    return value[-1] if isinstance(value, list) else value


def _as_list(value):
    return value if isinstance(value, list) else ([value] if value not in (None, "") else [])


def _download(call, name, rows):
    out = io.StringIO()
    writer = csv.writer(out)
    for row in rows:
        writer.writerow([csv_safe(cell) if isinstance(cell, str) else cell for cell in row])
    call.resp.content_type = "text/csv; charset=UTF-8"
    call.resp.set_header("Content-Disposition", f'attachment; filename="{name}"')
    call.resp.set_header("X-Content-Type-Options", "nosniff")
    call.resp.data = out.getvalue().encode("utf-8")


class Duplicates(Page):
    """GET /duplicates.cgi: the most duplicated bugs."""

    @responder
    def on_get(self, call):
        query = call.query
        params = {key: query[key] for key in ("product", "bug_id", "changedsince", "openonly",
                                              "sortby", "reverse", "maxrows") if key in query}
        params["product"] = [p for p in _as_list(query.get("product")) if p]
        found, products = call.read(
            ("Report.duplicates", params),
            ("Product.get", {"type": "selectable", "include_fields": "name"}))
        bugs = found["bugs"]
        if _single(query.get("ctype")) == "csv":
            header = [label for _, label in DUPLICATE_COLUMNS]
            return _download(call, "duplicates.csv", [header] + [
                [bug["id"], bug["count"], bug["delta"], bug["product"], bug["component"],
                 bug["severity"], bug["op_sys"], bug["target_milestone"], bug["summary"]]
                for bug in bugs])
        sort = _single(query.get("sortby")) or "dup_count"
        reverse = str(_single(query.get("reverse")) or "") not in ("", "0")
        base = {key: value for key, value in query.items() if key not in ("sortby", "reverse")}

        def sort_url(column):
            again = column == sort and not reverse
            return url("/duplicates.cgi", **dict(base, sortby=column, **(
                {"reverse": "1"} if again else {})))
        call.render("duplicates.html", title="Most duplicated bugs", bugs=bugs,
                    columns=DUPLICATE_COLUMNS, sort=sort, sort_url=sort_url,
                    changedsince=found["changedsince"],
                    products=sorted((p["name"] for p in products["products"]), key=str.lower),
                    chosen=params["product"], openonly=bool(params.get("openonly")),
                    maxrows=_single(query.get("maxrows")) or "20",
                    csv_url=url("/duplicates.cgi", **dict(query, ctype="csv")))


class SummarizeTime(Page):
    """GET /summarize_time.cgi: hours worked per bug and person (members of
    the time-tracking group only)."""

    @responder
    def on_get(self, call):
        query = call.query
        params = {key: query[key] for key in ("id", "do_depends", "start_date", "end_date")
                  if key in query}
        # Run without bugs too: the operation decides who may see the form.
        found = call.read_one("Report.time_summary", params)
        if not params.get("id"):
            found = None
        group_by = "owner" if _single(query.get("group_by")) == "owner" else "number"
        groups = _grouped(found["hours"], group_by) if found else []
        if found and _single(query.get("ctype")) == "csv":
            return _download(call, "time.csv", [["bug", "summary", "login", "hours"]] + [
                [row["bug_id"], row["summary"], row["login"], row["hours"]]
                for row in found["hours"]])
        call.render("summarize_time.html", title="Time summary", found=found, groups=groups,
                    group_by=group_by, ids=_single(query.get("id")) or "",
                    start_date=_single(query.get("start_date")) or "",
                    end_date=_single(query.get("end_date")) or "",
                    do_depends=str(_single(query.get("do_depends")) or "") not in ("", "0"),
                    csv_url=url("/summarize_time.cgi", **dict(query, ctype="csv")))


def _grouped(hours, group_by):
    """[(heading, [rows], total)] by bug (number) or by person (owner)."""
    groups = {}
    for row in hours:
        key = (f"Bug {row['bug_id']}: {row['summary']}" if group_by == "number"
               else (f"{row['real_name']} <{row['login']}>" if row["real_name"]
                     else row["login"]))
        groups.setdefault(key, []).append(row)
    return [(key, rows, round(sum(r["hours"] for r in rows), 2))
            for key, rows in groups.items()]
