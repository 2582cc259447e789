"""Keeping a tool's answer within a size a model's context can take: long
texts cut, then the longest lists shortened from their end, until the JSON
fits. What was cut is said in the answer, so a model knows to ask for less
(a narrower search, a later page of comments)."""

from ..http import json_bytes


# One text (a comment, a description) is cut past this many characters.
MAX_TEXT_CHARS = 8_000
# A whole answer, as JSON, stays under this many bytes.
MAX_ANSWER_BYTES = 100_000


def bounded(answer, max_bytes=MAX_ANSWER_BYTES, max_text=MAX_TEXT_CHARS):
    """`answer` (a dict) cut to fit: every string longer than `max_text`
    shortened (with a note of how much was left out), then items dropped
    from the end of the longest list until its JSON is at most `max_bytes`.
    Returns (the cut answer, True when anything was cut)."""
    cut = [False]
    answer = _cut_texts(answer, max_text, cut)
    while len(json_bytes(answer)) > max_bytes:
        found = _longest_list(answer)
        if found is None or not found:
            break
        del found[len(found) // 2 or 1:]
        cut[0] = True
    return answer, cut[0]


def _cut_texts(value, max_text, cut):
    if isinstance(value, str):
        if len(value) <= max_text:
            return value
        cut[0] = True
        return value[:max_text] + f"\n[... {len(value) - max_text} more characters left out]"
    if isinstance(value, dict):
        return {key: _cut_texts(item, max_text, cut) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_texts(item, max_text, cut) for item in value]
    return value


def _longest_list(value):
    """The list of more than one item with the largest JSON in `value`
    (searched through nested dicts and lists), or None."""
    best, best_size = None, 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            if len(item) > 1:
                size = len(json_bytes(item))
                if size > best_size:
                    best, best_size = item, size
            stack.extend(item)
    return best
