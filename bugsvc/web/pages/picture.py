"""Pictures of counts drawn on the server as SVG: bar, line and pie charts
(report.cgi's graphical reports and chart.cgi's series).

Drawn here rather than by a charting library: what a page needs is a few
rectangles, lines and labels, and drawing them ourselves keeps every
attribute under our control (no script, no style attribute the pages'
Content-Security-Policy would refuse, text escaped). Each picture names
itself (role="img" with a title and a description); the page puts the same
numbers in a table beside it for those who cannot see it. Series are told
apart by colour (a palette readable with colour blindness) and, for lines,
by the shape of their markers and the dashes of their lines too.
"""

import html
import itertools
import math

from markupsafe import Markup


# Okabe and Ito's palette, distinguishable with the common colour blindness.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
_DASHES = ("", "6 3", "2 3", "8 3 2 3")
_FONT = 'font-family="sans-serif"'
LABEL_CHARS = 24
# Ids of the pictures' titles, different for every picture a process draws.
_IDENTS = itertools.count(1)


def _text(value):
    return html.escape(str(value), quote=True)


def _short(label):
    label = str(label) if label != "" else "---"
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def _step(largest):
    """A round step for about five ticks up to `largest`."""
    if largest <= 5:
        return 1
    raw = largest / 5
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return int(factor * power)
    return int(10 * power)


def _frame(width, height, title, description, body):
    ident = f"picture-{next(_IDENTS)}"
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="picture" width="{width}"'
        f' height="{height}" viewBox="0 0 {width} {height}" role="img"'
        f' aria-labelledby="{ident}-t {ident}-d">'
        f'<title id="{ident}-t">{_text(title)}</title>'
        f'<desc id="{ident}-d">{_text(description)}</desc>'
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>'
        f'<text x="{width / 2:.0f}" y="24" text-anchor="middle" {_FONT} font-size="16"'
        f' font-weight="bold" fill="#000000">{_text(title)}</text>'
        + "".join(body) + "</svg>")


def _legend(names, left, top, markers=False):
    parts = []
    for index, name in enumerate(names):
        y = top + index * 20
        colour = COLOURS[index % len(COLOURS)]
        if markers:
            parts.append(f'<line x1="{left}" y1="{y + 6}" x2="{left + 24}" y2="{y + 6}"'
                         f' stroke="{colour}" stroke-width="2"'
                         + _dash(index) + "/>" + _marker(index, left + 12, y + 6))
        else:
            parts.append(f'<rect x="{left}" y="{y}" width="14" height="14" fill="{colour}"/>')
        parts.append(f'<text x="{left + 30}" y="{y + 11}" {_FONT} font-size="13"'
                     f' fill="#000000"><title>{_text(name or "---")}</title>'
                     f'{_text(_short(name))}</text>')
    return parts


def _dash(index):
    dash = _DASHES[index % len(_DASHES)]
    return f' stroke-dasharray="{dash}"' if dash else ""


def _marker(index, x, y):
    colour = COLOURS[index % len(COLOURS)]
    shape = index % 3
    if shape == 0:
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>'
    if shape == 1:
        return (f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8"'
                f' fill="{colour}"/>')
    return (f'<polygon points="{x:.1f},{y - 5:.1f} {x + 5:.1f},{y + 4:.1f}'
            f' {x - 5:.1f},{y + 4:.1f}" fill="{colour}"/>')


def _axes(x_labels, largest, width, height, vertical, legend_width, y_title):
    """The plot area (left, top, right, bottom), with its value axis, grid
    and category labels drawn."""
    bottom_room = 40 + (min(max((len(_short(label)) for label in x_labels), default=1),
                            LABEL_CHARS) * 7 if vertical else 0)
    left, top = 64, 44
    right, bottom = width - 20 - legend_width, height - bottom_room
    step = _step(largest)
    ceiling = max(step, math.ceil(largest / step) * step)
    parts = []
    for tick in range(0, ceiling + 1, step):
        y = bottom - (bottom - top) * tick / ceiling
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}"'
                     ' stroke="#d0d0d0" stroke-width="1"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" {_FONT}'
                     f' font-size="12" fill="#000000">{tick}</text>')
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}"'
                 ' stroke="#000000" stroke-width="1"/>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"'
                 ' stroke="#000000" stroke-width="1"/>')
    parts.append(f'<text x="16" y="{(top + bottom) / 2:.0f}" text-anchor="middle" {_FONT}'
                 f' font-size="12" fill="#000000" transform="rotate(-90 16'
                 f' {(top + bottom) / 2:.0f})">{_text(y_title)}</text>')
    slot = (right - left) / max(len(x_labels), 1)
    # At most about 24 category labels: a long series of days names every
    # n-th one (its table names them all).
    every = max(1, math.ceil(len(x_labels) / 24))
    for index, label in enumerate(x_labels):
        if index % every:
            continue
        x = left + slot * (index + 0.5)
        if vertical:
            parts.append(f'<text x="{x:.1f}" y="{bottom + 12}" text-anchor="end" {_FONT}'
                         f' font-size="12" fill="#000000" transform="rotate(-60 {x:.1f}'
                         f' {bottom + 12})"><title>{_text(label or "---")}</title>'
                         f'{_text(_short(label))}</text>')
        else:
            parts.append(f'<text x="{x:.1f}" y="{bottom + 18}" text-anchor="middle" {_FONT}'
                         f' font-size="12" fill="#000000"><title>{_text(label or "---")}'
                         f'</title>{_text(_short(label))}</text>')
    return (left, top, right, bottom, ceiling), parts


def bar_chart(title, description, x_labels, series, width=800, height=450, vertical=False,
              y_title="Bugs"):
    """SVG of grouped bars: for each x label, one bar per series.
    series: [(name, [count for each x label])]."""
    names = [name for name, _ in series]
    legend = 40 + 7 * min(max((len(_short(n)) for n in names), default=1),
                          LABEL_CHARS) if len(series) > 1 else 0
    largest = max((count for _, counts in series for count in counts), default=0)
    (left, top, right, bottom, ceiling), parts = _axes(x_labels, largest, width, height,
                                                       vertical, legend, y_title)
    slot = (right - left) / max(len(x_labels), 1)
    bar = slot * 0.8 / max(len(series), 1)
    for s_index, (name, counts) in enumerate(series):
        colour = COLOURS[s_index % len(COLOURS)]
        for index, count in enumerate(counts):
            tall = (bottom - top) * count / ceiling
            x = left + slot * index + slot * 0.1 + bar * s_index
            what = f"{x_labels[index] or '---'}" + (f", {name or '---'}" if len(series) > 1
                                                    else "") + f": {count}"
            parts.append(f'<rect x="{x:.1f}" y="{bottom - tall:.1f}" width="{bar:.1f}"'
                         f' height="{tall:.1f}" fill="{colour}"><title>{_text(what)}</title>'
                         '</rect>')
            if count and bar >= 14:
                parts.append(f'<text x="{x + bar / 2:.1f}" y="{bottom - tall - 4:.1f}"'
                             f' text-anchor="middle" {_FONT} font-size="11" fill="#000000">'
                             f'{count}</text>')
    if len(series) > 1:
        parts += _legend(names, right + 20, top)
    return _frame(width, height, title, description, parts)


def line_chart(title, description, x_labels, series, width=800, height=450, vertical=False,
               y_title="Bugs"):
    """SVG of one line per series across the x labels, each with its own
    colour, marker and dashes. series: [(name, [count for each x label])]."""
    names = [name for name, _ in series]
    legend = 60 + 7 * min(max((len(_short(n)) for n in names), default=1),
                          LABEL_CHARS) if len(series) > 1 else 0
    largest = max((count or 0 for _, counts in series for count in counts), default=0)
    (left, top, right, bottom, ceiling), parts = _axes(x_labels, largest, width, height,
                                                       vertical, legend, y_title)
    slot = (right - left) / max(len(x_labels), 1)
    for s_index, (_name, counts) in enumerate(series):
        colour = COLOURS[s_index % len(COLOURS)]
        points = [None if count is None else
                  (left + slot * (index + 0.5), bottom - (bottom - top) * count / ceiling)
                  for index, count in enumerate(counts)]
        # A day without a count breaks the line.
        runs, run = [], []
        for point in points + [None]:
            if point is None:
                if run:
                    runs.append(run)
                run = []
            else:
                run.append(point)
        for run in runs:
            if len(run) > 1:
                parts.append('<polyline fill="none" stroke="' + colour + '" stroke-width="2"'
                             + _dash(s_index) + ' points="'
                             + " ".join(f"{x:.1f},{y:.1f}" for x, y in run) + '"/>')
        points = [point for point in points if point is not None]
        if len(points) <= 60:
            parts += [_marker(s_index, x, y) for x, y in points]
    if len(series) > 1:
        parts += _legend(names, right + 20, top, markers=True)
    return _frame(width, height, title, description, parts)


def pie_chart(title, description, labels, counts, width=800, height=450):
    """SVG of a pie: one slice per label, its share in the legend."""
    total = sum(counts)
    radius = min(height - 80, width / 2) / 2
    cx, cy = 40 + radius, 44 + radius + 10
    parts = []
    angle = -math.pi / 2
    for index, count in enumerate(counts):
        if not count:
            continue
        colour = COLOURS[index % len(COLOURS)]
        share = count / total
        what = f"{labels[index] or '---'}: {count} ({share:.0%})"
        if share >= 0.9999:
            parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}"'
                         f' fill="{colour}"><title>{_text(what)}</title></circle>')
            continue
        end = angle + share * 2 * math.pi
        large = 1 if share > 0.5 else 0
        x1, y1 = cx + radius * math.cos(angle), cy + radius * math.sin(angle)
        x2, y2 = cx + radius * math.cos(end), cy + radius * math.sin(end)
        parts.append(f'<path d="M{cx:.1f},{cy:.1f} L{x1:.1f},{y1:.1f} A{radius:.1f},'
                     f'{radius:.1f} 0 {large} 1 {x2:.1f},{y2:.1f} Z" fill="{colour}"'
                     f' stroke="#ffffff" stroke-width="1"><title>{_text(what)}</title></path>')
        angle = end
    shares = [f"{label or '---'}: {count} ({count / total:.0%})" if total else label
              for label, count in zip(labels, counts, strict=True)]
    parts += _legend(shares, cx + radius + 40, 54)
    return _frame(width, height, title, description, parts)
