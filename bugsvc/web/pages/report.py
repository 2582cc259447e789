"""Reports (report.cgi): the bugs a search finds, counted by the values of
up to three fields, as a table, as a bar, line or pie chart (SVG drawn on
the server, with the same numbers in a table), as CSV (`ctype=csv`) or as
a PNG picture (`ctype=png`), under Bugzilla's parameters: x_axis_field,
y_axis_field, z_axis_field, format (table, bar, line, pie), ctype,
width, height, x_labels_vertical, cumulate, and the bug list's search
parameters choosing the bugs. Counting is Report.get's, so only bugs the
visitor may see are ever counted; each count links to the bug list of
its bugs.
"""

import csv
import io

from ...catalogue import bug_fields
from . import picture
from .base import Page, responder
from .buglist import CSV_FORMULA_STARTS, search_params
from .site import PageRefused, url


FORMATS = ("table", "bar", "line", "pie")
AXES = ("x_axis_field", "y_axis_field", "z_axis_field")
# Keys that say how to show a report, not which bugs it counts.
_SHOWING = AXES + ("format", "ctype", "action", "width", "height", "x_labels_vertical",
                   "cumulate", "query_format", "no_redirect", "save_report")
# Bugzilla's default size of a picture, and the bounds it accepts (ours
# above: a picture costs memory on the server).
WIDTH, HEIGHT = 1024, 600
WIDTH_RANGE, HEIGHT_RANGE = (400, 2400), (300, 1800)


def _single(value):
    return value[-1] if isinstance(value, list) else value


def _criteria(query):
    """The search parameters of a report's query string."""
    found = {key: value for key, value in search_params(query).items() if key not in _SHOWING}
    if not str(_single(found.get("quicksearch")) or "").strip():
        found.pop("quicksearch", None)
    return found


def picture_size(query, name, default, bounds):
    """The width or height `name` of a picture in pixels (`default` when
    not given). Errors: PageRefused 400 outside `bounds`."""
    value = str(_single(query.get(name)) or "").strip()
    if not value:
        return default
    if not value.isdigit() or not bounds[0] <= int(value) <= bounds[1]:
        raise PageRefused(400, f"The {name} of a picture must be a number from {bounds[0]} "
                               f"to {bounds[1]}.")
    return int(value)


def _names_of(field):
    """Every name a search parameter may give the field `field`."""
    for known in bug_fields.STANDARD:
        if known.name == field:
            return {known.name, known.api, *known.old_names, *known.param_names}
    return {field}


def cell_query(criteria, fields, values):
    """The bug list's query of one count: the report's search with each
    axis field equal to its value (or empty, for "")."""
    query = dict(criteria)
    for field, value in zip(fields, values, strict=True):
        if not field:
            continue
        for name in _names_of(field):
            query.pop(name, None)
            query.pop(f"{name}_type", None)
        query[field] = value
        query[f"{field}_type"] = "isempty" if value == "" else "equals"
    return query


class Report(Page):
    """GET /report.cgi: the menu of reports without axes, else the report."""

    @responder
    def on_get(self, call):
        query = call.query
        chosen = {name: str(_single(query.get(name)) or "").strip() for name in AXES}
        fields = call.read_one("Report.axes")["fields"]
        labels = {field["name"]: field["display_name"] for field in fields}
        shape = str(_single(query.get("format")) or "table").strip()
        if shape not in FORMATS:
            raise PageRefused(400, f"format must be one of {', '.join(FORMATS)}.")
        if not any(chosen.values()) or _single(query.get("action")) == "menu":
            return self._menu(call, fields, chosen, shape)
        x, y, z = (chosen[name] for name in AXES)
        # As the reference: a table of one field lists its values downwards,
        # a picture of one field along the horizontal axis.
        if shape == "table" and x and not y:
            x, y = "", x
        elif shape != "table" and y and not x:
            x, y = y, ""
        ctype = str(_single(query.get("ctype")) or "html").strip()
        if ctype not in ("html", "csv", "png"):
            raise PageRefused(400, "ctype must be html, csv or png.")
        if shape != "table" and not x:
            raise PageRefused(400, "A picture needs a field along its horizontal axis "
                                   "(x_axis_field).")
        if ctype == "png" and shape == "table":
            raise PageRefused(400, "A table has no picture: choose format=bar, line or pie "
                                   "for ctype=png.")
        width = picture_size(query, "width", WIDTH, WIDTH_RANGE)
        height = picture_size(query, "height", HEIGHT, HEIGHT_RANGE)
        criteria = _criteria(query)
        counted = call.read_one("Report.get", dict(criteria, x_axis_field=x, y_axis_field=y,
                                                   z_axis_field=z))
        report = _Shown(counted, labels, criteria, query)
        if ctype == "csv":
            return _csv(call, report)
        pictures = []
        if shape != "table":
            vertical = bool(str(_single(query.get("x_labels_vertical")) or "").strip()
                            not in ("", "0"))
            pictures = [report.picture(shape, table, width, height, vertical)
                        for table in counted["tables"]]
        if ctype == "png":
            return _png(call, pictures)
        base = {key: value for key, value in query.items() if key not in ("ctype",)}
        call.render("report.html", title=report.title, report=report, shape=shape,
                    pictures=pictures, formats=FORMATS,
                    format_url=lambda name: url("/report.cgi", **dict(base, format=name)),
                    csv_url=url("/report.cgi", **dict(base, ctype="csv")),
                    png_url=url("/report.cgi", **dict(base, ctype="png")),
                    menu_url=url("/report.cgi", **dict(base, action="menu")),
                    list_url=url("/buglist.cgi", **criteria))

    @staticmethod
    def _menu(call, fields, chosen, shape):
        query = call.query
        criteria = _criteria(query)
        hidden = [(key, item) for key, value in criteria.items()
                  if key not in ("product", "bug_status", "quicksearch")
                  for item in (value if isinstance(value, list) else [value])]
        products = call.read_one("Product.get", {"type": "selectable",
                                                 "include_fields": "name"})["products"]
        call.render("report_menu.html", title="Reports", fields=fields, chosen=chosen,
                    shape=shape, formats=FORMATS, hidden=hidden,
                    products=sorted((p["name"] for p in products), key=str.lower),
                    product=_single(criteria.get("product")) or "",
                    chosen_status=_single(criteria.get("bug_status")) or "",
                    words=_single(criteria.get("quicksearch")) or "")


class _Shown:
    """A report as the page shows it: its labels, titles and links."""

    def __init__(self, counted, labels, criteria, query):
        self.counted = counted
        self.labels = labels
        self.criteria = criteria
        self.fields = [counted[name] for name in AXES]
        self.x_labels = counted["x_labels"] or [None]
        self.y_labels = counted["y_labels"] or [None]
        self.tables = counted["tables"]
        self.total = counted["total"]
        names = [self.label(field) for field in self.fields if field]
        self.title = "Bugs by " + " and ".join(names)

    def label(self, field):
        return self.labels.get(field, field) if field else ""

    def link(self, x, y, z):
        """The bug list of one cell (None: a total over an axis)."""
        fields, values = [], []
        for field, value in zip(self.fields, (x, y, z), strict=True):
            if field and value is not None:
                fields.append(field)
                values.append(value)
        return url("/buglist.cgi", **cell_query(self.criteria, fields, values))

    @staticmethod
    def value(label):
        return "---" if label == "" else ("Total" if label is None else label)

    def picture(self, shape, table, width, height, vertical):
        x_field, y_field, z_field = self.fields
        title = self.title + (f": {self.label(z_field)} {self.value(table['z'])}"
                              if z_field else "")
        x_labels = self.counted["x_labels"]
        if shape == "pie":
            counts = table["column_totals"]
            description = "; ".join(f"{self.value(label)}: {count}"
                                    for label, count in zip(x_labels, counts, strict=True))
            return picture.pie_chart(title, f"{self.label(x_field)}: {description}.",
                                     x_labels, counts, width, height)
        series = [(label if label is not None else "Bugs", row)
                  for label, row in zip(self.y_labels, table["rows"], strict=True)]
        description = " ".join(
            (f"{self.value(name)}: " if y_field else "")
            + ", ".join(f"{self.value(label)} {count}"
                        for label, count in zip(x_labels, row, strict=True))
            + "." for name, row in series)
        draw = picture.bar_chart if shape == "bar" else picture.line_chart
        return draw(title, f"Bugs by {self.label(x_field)}. {description}", x_labels, series,
                    width, height, vertical)


def _csv(call, report):
    out = io.StringIO()
    writer = csv.writer(out)
    x_field, y_field, z_field = report.fields
    for table in report.tables:
        if z_field:
            writer.writerow([csv_safe(f"{report.label(z_field)}: "
                                      f"{report.value(table['z'])}")])
        writer.writerow([csv_safe(f"{report.label(y_field)} / {report.label(x_field)}")]
                        + [csv_safe(report.value(label) if label is not None else "Bugs")
                           for label in report.x_labels] + (["Total"] if x_field else []))
        for index, (label, row) in enumerate(zip(report.y_labels, table["rows"], strict=True)):
            writer.writerow([csv_safe(report.value(label) if label is not None else "Bugs")]
                            + row + ([table["row_totals"][index]] if x_field else []))
        if y_field:
            writer.writerow(["Total"] + table["column_totals"]
                            + ([table["total"]] if x_field else []))
    call.resp.content_type = "text/csv; charset=UTF-8"
    call.resp.set_header("Content-Disposition", 'attachment; filename="report.csv"')
    call.resp.set_header("X-Content-Type-Options", "nosniff")
    call.resp.data = out.getvalue().encode("utf-8")


def csv_safe(text):
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    text = str(text)
    return "'" + text if text.startswith(CSV_FORMULA_STARTS) and text != "---" else text


def rasterize(svg):
    """PNG bytes of SVG text `svg`, by CairoSVG (the optional extra `png`).
    Errors: PageRefused 501 when CairoSVG (or the cairo library it needs)
    is not installed."""
    try:
        import cairosvg
    except (ImportError, OSError):
        raise PageRefused(501, "This server cannot draw PNG pictures: install bugsvc's "
                               "optional extra 'png' (pip install 'bugsvc[png]', which needs "
                               "the cairo library), or use the SVG picture on the report's "
                               "page.") from None
    return cairosvg.svg2png(bytestring=str(svg).encode("utf-8"))


def _png(call, pictures):
    data = rasterize(pictures[0])
    call.resp.content_type = "image/png"
    call.resp.set_header("Content-Disposition", 'attachment; filename="report.png"')
    call.resp.set_header("X-Content-Type-Options", "nosniff")
    call.resp.data = data
