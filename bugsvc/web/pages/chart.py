"""Charts over time (chart.cgi) under Bugzilla's parameters: without an
action, the series one may chart (public ones and one's own) to choose
from; `action=wrap` with `line0`, `line1` ... (series ids; several ids on
one line are added up), `label0` ..., `datefrom`, `dateto`, `cumulate`,
`width`, `height` draws them as a line chart (SVG, with its numbers in a
table), `ctype=csv` and `ctype=png` download them; `action=convert_search`
with a bug list's query string offers to save it as a series, `action=create`
(POST) saves it, `action=delete` (POST) deletes one. The operations are
Series.get, Series.data, Series.create and Series.delete.
"""

import csv
import io
import re
from urllib.parse import urlencode

from . import picture
from .base import Page, require_user, responder
from .buglist import search_params
from .report import HEIGHT, HEIGHT_RANGE, WIDTH, WIDTH_RANGE, csv_safe, picture_size, rasterize
from .site import PageRefused, url


_LINE = re.compile(r"^line(\d{1,9})$")
MOST_LINES = 20


def _single(value):
    return value[-1] if isinstance(value, list) else value


def _lines(query):
    """[(number, [series ids])] of the line<N> parameters, by number."""
    lines = []
    for key, value in query.items():
        match = _LINE.match(key)
        if not match:
            continue
        ids = []
        for item in value if isinstance(value, list) else [value]:
            for part in str(item).split(","):
                part = part.strip()
                if part:
                    if not part.isdigit():
                        raise PageRefused(400, f"{key} must name series by their numbers.")
                    ids.append(int(part))
        if ids:
            lines.append((int(match.group(1)), list(dict.fromkeys(ids))))
    if len(lines) > MOST_LINES:
        raise PageRefused(400, f"A chart draws at most {MOST_LINES} lines.")
    return sorted(lines)


class Chart(Page):
    """GET /chart.cgi: choose series, or draw them; POST: save or delete one."""

    @responder
    def on_get(self, call):
        query = call.query
        action = str(_single(query.get("action")) or "").strip()
        known = {item["id"]: item for item in call.read_one("Series.get")["series"]}
        if action in ("wrap", "plot"):
            return self._chart(call, query, known)
        new_query = ""
        if action == "convert_search":
            new_query = urlencode(search_params(
                {k: v for k, v in query.items() if k != "action"}), doseq=True)
        call.render("chart_menu.html", title="Charts", series=list(known.values()),
                    new_query=new_query,
                    may_publish=bool(call.user and "admin" in call.user["groups"]))

    def _chart(self, call, query, known):
        lines = _lines(query)
        if not lines:
            raise PageRefused(400, "Choose at least one series to chart (line0=...).")
        ctype = str(_single(query.get("ctype")) or "html").strip()
        if ctype not in ("html", "csv", "png"):
            raise PageRefused(400, "ctype must be html, csv or png.")
        width = picture_size(query, "width", WIDTH, WIDTH_RANGE)
        height = picture_size(query, "height", HEIGHT, HEIGHT_RANGE)
        ids = sorted({series_id for _, ids in lines for series_id in ids})
        found = call.read_one("Series.data", {
            "ids": ids, "datefrom": _single(query.get("datefrom")) or "",
            "dateto": _single(query.get("dateto")) or ""})["data"]
        by_series = {int(key): {row["date"]: row["count"] for row in rows}
                     for key, rows in found.items()}
        days = sorted({day for counts in by_series.values() for day in counts})
        names, values = [], []
        for number, line_ids in lines:
            label = str(_single(query.get(f"label{number}")) or "").strip()
            if not label:
                label = " + ".join(" / ".join((known[i]["category"], known[i]["subcategory"],
                                               known[i]["name"])) for i in line_ids)
            names.append(label)
            values.append([None if any(day not in by_series[i] for i in line_ids)
                           else sum(by_series[i][day] for i in line_ids) for day in days])
        if str(_single(query.get("cumulate")) or "").strip() not in ("", "0"):
            # Each line drawn on top of those before it, as the reference's.
            for index in range(1, len(values)):
                values[index] = [None if a is None or b is None else a + b
                                 for a, b in zip(values[index - 1], values[index], strict=True)]
        if ctype == "csv":
            return _csv(call, days, names, values)
        ends = zip(names, (v[0] if v else None for v in values),
                   (v[-1] if v else None for v in values), strict=True)
        summary = "; ".join(f"{name}: from {first} to {last}" for name, first, last in ends)
        drawn = picture.line_chart(
            "Bugs over time", summary, days, list(zip(names, values, strict=True)), width,
            height, vertical=True) if days else None
        if ctype == "png":
            if drawn is None:
                raise PageRefused(404, "These series have no counts in those dates yet.")
            call.resp.content_type = "image/png"
            call.resp.set_header("Content-Disposition", 'attachment; filename="chart.png"')
            call.resp.set_header("X-Content-Type-Options", "nosniff")
            call.resp.data = rasterize(drawn)
            return
        base = {key: value for key, value in query.items() if key != "ctype"}
        call.render("chart.html", title="Bugs over time", days=days, names=names,
                    values=values, picture=drawn,
                    csv_url=url("/chart.cgi", **dict(base, ctype="csv")),
                    png_url=url("/chart.cgi", **dict(base, ctype="png")))

    @responder
    def on_post(self, call):
        call.check_csrf()
        require_user(call)
        action = call.field("action")
        if action == "create":
            created = call.write("Series.create", {
                "category": call.field("category"), "subcategory": call.field("subcategory"),
                "name": call.field("name"), "query": call.field("query"),
                "frequency": call.field("frequency") or "1",
                "is_public": call.field("public") or "0"})
            call.redirect(url("/chart.cgi", action="wrap", line0=created["id"]))
            return
        if action == "delete":
            call.write("Series.delete", {"id": call.field("series_id")})
            call.redirect("/chart.cgi")
            return
        raise PageRefused(400, "action must be create or delete.")


def _csv(call, days, names, values):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["date"] + [csv_safe(name) for name in names])
    for index, day in enumerate(days):
        writer.writerow([day] + ["" if line[index] is None else line[index] for line in values])
    call.resp.content_type = "text/csv; charset=UTF-8"
    call.resp.set_header("Content-Disposition", 'attachment; filename="chart.csv"')
    call.resp.set_header("X-Content-Type-Options", "nosniff")
    call.resp.data = out.getvalue().encode("utf-8")
