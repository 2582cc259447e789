"""Possible duplicates of a summary about to be filed."""

import re

from ..store.db import placeholders
from . import visibility
from .status import ultimate_dupe


MAX_RESULTS = 25
_EDGE_PUNCTUATION = re.compile(r"^\W+|\W+$")


def words_of(summary):
    """The words of `summary` worth matching: longer than 2 characters,
    without leading/trailing punctuation, lower-cased, each once."""
    words = []
    for word in summary.split():
        word = _EDGE_PUNCTUATION.sub("", word).lower()
        if len(word) > 2 and word not in words:
            words.append(word)
    return words


def _like(word):
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def possible_duplicates(ctx, summary, product_ids, limit):
    """Ids of visible bugs whose summaries share words with `summary`, most
    shared words first (then newest), duplicates replaced by the bug they
    duplicate, at most `limit`. product_ids: [] means every product."""
    words = words_of(summary)
    if not words:
        return []
    conditions = " OR ".join("lower(b.summary) LIKE ? ESCAPE '\\'" for _ in words)
    sql = f"SELECT b.id, b.summary, b.resolution FROM bugs b WHERE ({conditions})"
    args = [_like(word) for word in words]
    if product_ids:
        sql += f" AND b.product_id IN ({placeholders(product_ids)})"
        args += list(product_ids)
    candidates = []
    for bug_id, text, resolution in ctx.conn.execute(sql, args):
        lowered = text.lower()
        relevance = sum(1 for word in words if word in lowered)
        candidates.append((-relevance, -bug_id, resolution == "DUPLICATE"))
    candidates.sort()
    ordered = []
    for _, negative_id, is_duplicate in candidates:
        target = ultimate_dupe(ctx.conn, -negative_id) if is_duplicate else -negative_id
        if target not in ordered:
            ordered.append(target)
    visible = visibility.visible_bug_ids(ctx, ordered)
    return [bug_id for bug_id in ordered if bug_id in visible][:limit]
