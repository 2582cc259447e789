"""Comment text as HTML, for the pages (and whatever else shows comments as
HTML): plain comments escaped whole with their references made links, as
the reference's quoteUrls does; Markdown comments rendered by markdown-it-py
(CommonMark) and then cleaned by nh3.

Markdown is rendered with raw HTML turned off, so HTML typed in a comment
is shown as text and never becomes an element; links may only be web
addresses, mail addresses or addresses on this site (no javascript:, data:
or other schemes); images are shown as links to them (a comment loads
nothing from elsewhere). The HTML sanitizer then keeps only the elements and
attributes Markdown makes, a second wall should the renderer ever let
something through. The references (bug N, comment N, attachment N, web
addresses) are made links in the text of a Markdown comment too, never
inside its code, and so are @mentions of the people the reader may see.

Whatever a comment holds, rendering it costs time in step with its size:
markdown-it's search for where links end is bounded (see
LINK_SCAN_BUDGET_PER_CHARACTER), so runs of brackets beyond anything a
person writes are shown as text instead of costing seconds.
"""

import contextvars
import html
import re
import types
from urllib.parse import quote

import nh3
from markdown_it import MarkdownIt, helpers


# What becomes a link in comment text, as the reference's quoteUrls does:
# web addresses, "bug N" (with "comment M"), "comment M", "attachment N".
_LINKS = re.compile(
    # The lookahead lets the engine skip at once the places where no link
    # can start (a comment is scanned at every character).
    r"(?=[hbcaBCA])(?:(?P<url>\bhttps?://[^\s<>\"]+[^\s<>\".,;:!?)\]'])"
    r"|(?P<bug>\b[Bb]ug[\s#]*(?P<bug_id>\d{1,9})(?:,?\s*[Cc]omment\s*#?(?P<bug_comment>\d{1,6}))?)"
    r"|(?P<comment>\b[Cc]omment\s*#?(?P<comment_no>\d{1,6}))"
    r"|(?P<attachment>\b[Aa]ttachment\s*#?(?P<attachment_id>\d{1,9})))")
# A quick test: text with none of these cannot hold a link.
_MAY_LINK = re.compile(r"https?://|[Bb]ug|[Cc]omment|[Aa]ttachment")
# The schemes a Markdown link may have (an address without one is on this site).
_SCHEMES = {"http", "https", "mailto"}
_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.\-]*):")
# An @mention: "@" after a space or the start, then a login or a name
# without spaces (a trailing full stop is punctuation).
_MENTION = re.compile(r"(?<![\w@.+\-])@([\w+\-]+(?:\.[\w+\-]+)*(?:@[\w\-]+(?:\.[\w\-]+)+)?)")
# The mentions a comment counts (more are text).
MAX_MENTIONS = 50
# Markdown's nesting (quotes in lists in quotes...) deeper than this is text.
MAX_NESTING = 20
# The steps markdown-it may take looking for where a link or image ends (a
# token of its text "[...]" stepped over, a character of its address
# "(...)"), for each character of a comment, and a few more for a short one.
# Ordinary Markdown, links in links included, takes under one a character.
# Without a bound, a run of "[" or "![" takes 20 to 40 (each "[" looks again
# for its "]", down to MAX_NESTING) and one of "[](" about 30 (each address
# is read up to 32 unclosed "("): over a second for a comment at the size
# limit. Past the budget, no more links or images are found: the rest of
# their "[", "](" and addresses is shown as text.
LINK_SCAN_BUDGET_PER_CHARACTER = 2
LINK_SCAN_BUDGET_BASE = 1000
# [steps left] of the parse under way (set as each parse starts).
_LINK_SCANS = contextvars.ContextVar("bugsvc_link_scans")
# Where markdown-it's reading of a link's address stops at the latest:
# <...> at a line's end or an angle bracket, else at a space or a control
# (a backslash before one of them makes it read on).
_BRACKETED_ADDRESS_END = re.compile(r"(?<!\\)[\n<>]")
_ADDRESS_END = re.compile(r"(?<!\\)[\x00-\x20\x7f]")

# What a Markdown comment may hold once rendered; anything else is removed.
_TAGS = {"p", "br", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li",
         "h3", "hr", "a", "table", "thead", "tbody", "tr", "th", "td"}
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
_CLASSES = {"a": {"mention"}}


def mention_names(text, is_markdown=False):
    """The names @mentioned in a comment's `text`, lower-cased, in order,
    each once, at most MAX_MENTIONS (in a Markdown comment, not those in
    its code)."""
    if "@" not in text:
        return []
    if is_markdown:
        text = "\n".join(token.content for block in _MARKDOWN.parse(text)
                         for token in block.children or () if token.type == "text")
    names = []
    for match in _MENTION.finditer(text):
        name = match.group(1).lower()
        if name not in names:
            names.append(name)
            if len(names) == MAX_MENTIONS:
                break
    return names


def pick_mentioned(names, accounts):
    """{name: account} of the lower-cased @`names` that mean exactly one of
    `accounts` (dicts with "login"): its whole login, or the part of its
    login before '@' when no other account's login starts so. (A real name
    has spaces: the people picker puts the login of the person chosen.)"""
    found, candidates = {}, {}
    for account in accounts:
        login = account["login"].lower()
        for key in (login, login.split("@", 1)[0]):
            candidates.setdefault(key, {})[login] = account
    for name in names:
        matches = candidates.get(name, {})
        if name in matches:
            found[name] = matches[name]
        elif "@" not in name and len(matches) == 1:
            found[name] = next(iter(matches.values()))
    return found


def _mentions_html(text, people):
    """Escaped `text` with the @mentions of `people` ({name: (login, real
    name)}) made links to their bugs."""
    parts, last = [], 0
    for match in _MENTION.finditer(text):
        person = people.get(match.group(1).lower())
        if person is None:
            continue
        login, real_name = person
        parts.append(html.escape(text[last:match.start()], quote=False))
        last = match.end()
        target = html.escape(
            "/buglist.cgi?emailassigned_to1=1&emailreporter1=1&emailcc1=1&emailqa_contact1=1"
            f"&emailtype1=exact&email1={quote(login, safe='@')}", quote=True)
        title = html.escape(f"{real_name} <{login}>" if real_name else login, quote=True)
        parts.append(f'<a class="mention" href="{target}" title="{title}">'
                     f'{html.escape(match.group(0), quote=False)}</a>')
    parts.append(html.escape(text[last:], quote=False))
    return "".join(parts)


def references_html(text, bug_id=None, people=None):
    """`text` as HTML: every character escaped, then web addresses, bug,
    comment and attachment references made links (comment N of bug
    `bug_id` when given, else of the page it is shown on), and the
    @mentions of `people` ({lower-cased name: (login, real name)}: those the
    reader may see)."""
    escape = _mentions_html if people and "@" in text else (
        lambda part, _: html.escape(part, quote=False))
    if not _MAY_LINK.search(text):
        return escape(text, people)
    parts, last = [], 0
    for match in _LINKS.finditer(text):
        parts.append(escape(text[last:match.start()], people))
        last = match.end()
        shown = html.escape(match.group(0), quote=False)
        if match.group("url"):
            href = html.escape(match.group("url"), quote=True)
            parts.append(f'<a href="{href}" rel="nofollow noopener noreferrer">{shown}</a>')
        elif match.group("bug"):
            target = f"/show_bug.cgi?id={match.group('bug_id')}"
            if match.group("bug_comment"):
                target += f"#c{match.group('bug_comment')}"
            parts.append(f'<a href="{target}">{shown}</a>')
        elif match.group("comment"):
            target = f"#c{match.group('comment_no')}"
            if bug_id is not None:
                target = f"/show_bug.cgi?id={int(bug_id)}" + target
            parts.append(f'<a href="{target}">{shown}</a>')
        else:
            target = f"/attachment.cgi?id={match.group('attachment_id')}&amp;action=edit"
            parts.append(f'<a href="{target}">{shown}</a>')
    parts.append(escape(text[last:], people))
    return "".join(parts)


def _allowed_link(url):
    """True for a link Markdown may make: http(s), mailto or this site's."""
    match = _SCHEME.match(url)
    return match is None or match.group(1).lower() in _SCHEMES


def _text(self, tokens, idx, options, env):
    """Text outside code and outside a link: with its references made links."""
    token = tokens[idx]
    if token.meta.get("in_link"):
        return html.escape(token.content, quote=False)
    return references_html(token.content, env.get("bug_id"), env.get("people"))


def _image(self, tokens, idx, options, env):
    """An image as a link to it, its description the link's text."""
    token = tokens[idx]
    src = html.escape(token.attrGet("src") or "", quote=True)
    alt = html.escape(self.renderInlineAsText(token.children or [], options, env), quote=False)
    return f'<a href="{src}">{alt or src}</a>'


def _heading_open(self, tokens, idx, options, env):
    # A comment's headings are below the page's "Comments" (h2), whatever
    # their level: one level, so that headings never skip one.
    return "<h3>"


def _heading_close(self, tokens, idx, options, env):
    return "</h3>\n"


def _mark_links(state):
    """Core rule: note the text tokens inside a link (no link in a link)."""
    for block in state.tokens:
        depth = 0
        for token in block.children or ():
            if token.type == "link_open":
                depth += 1
            elif token.type == "link_close":
                depth -= 1
            elif token.type == "text" and depth:
                token.meta["in_link"] = True


def _link_scan_budget(state):
    """Core rule (before the block parse, which reads link definitions): the
    budget of this parse's link scanning (see LINK_SCAN_BUDGET_PER_CHARACTER)."""
    _LINK_SCANS.set([int(LINK_SCAN_BUDGET_PER_CHARACTER * len(state.src)) + LINK_SCAN_BUDGET_BASE])


def _spend_link_scans(steps):
    """True, and `steps` taken from the parse's budget, if they fit in it;
    else False and nothing left."""
    left = _LINK_SCANS.get()
    if steps > left[0]:
        left[0] = 0
        return False
    left[0] -= steps
    return True


def _bound_link_scans(md):
    """Make parser `md` count its link scanning against the parse's budget
    (see LINK_SCAN_BUDGET_PER_CHARACTER): each token it steps over in a
    link's text, each character of a link's address it may read (up to
    where the reading stops at the latest). Once the budget is spent, a
    search for the end of a link's text ends at the end of the paragraph, as
    markdown-it does past its nesting limit, and an address is not read:
    the link is not found and its characters stay text, at no further cost."""
    skip_token = md.inline.skipToken

    def bounded_skip_token(state):
        if _spend_link_scans(1):
            skip_token(state)
        else:
            state.pos = state.posMax

    def bounded_link_destination(string, pos, maximum):
        # Read no further than the budget goes; then charged for what was
        # read: the address found, or up to where reading stops at the latest.
        window = min(maximum, pos + _LINK_SCANS.get()[0])
        found = helpers.parseLinkDestination(string, pos, window)
        if found.ok and not (found.pos == window < maximum):
            _spend_link_scans(found.pos - pos)
            return found
        if string.startswith(")", pos):
            _spend_link_scans(1)        # (no address: "[text]()")
        else:
            end = _BRACKETED_ADDRESS_END if string.startswith("<", pos) else _ADDRESS_END
            stop = end.search(string, pos + 1, window)
            _spend_link_scans((stop.start() if stop else window) - pos)
        return helpers.parseLinkDestination(string, pos, pos)   # (no address)

    md.inline.skipToken = bounded_skip_token
    md.helpers = types.SimpleNamespace(parseLinkLabel=helpers.parseLinkLabel,
                                       parseLinkTitle=helpers.parseLinkTitle,
                                       parseLinkDestination=bounded_link_destination)


def _parser():
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"])
    md.validateLink = _allowed_link
    md.core.ruler.before("block", "bugsvc_link_scan_budget", _link_scan_budget)
    _bound_link_scans(md)
    md.core.ruler.push("bugsvc_links", _mark_links)
    md.add_render_rule("text", _text)
    md.add_render_rule("image", _image)
    md.add_render_rule("heading_open", _heading_open)
    md.add_render_rule("heading_close", _heading_close)
    return md


_MARKDOWN = _parser()
_CLEANER = nh3.Cleaner(tags=_TAGS, attributes=_ATTRIBUTES, allowed_classes=_CLASSES,
                       url_schemes=_SCHEMES,
                       link_rel="nofollow noopener noreferrer", strip_comments=True)


def markdown_html(text, bug_id=None, people=None):
    """Markdown comment `text` as clean HTML (see the module's docstring)."""
    return _CLEANER.clean(_MARKDOWN.render(text, {"bug_id": bug_id, "people": people}))


def comment_html(text, is_markdown=False, bug_id=None, people=None):
    """A comment's text as HTML: Markdown rendered, or plain text escaped
    (either way with its references, and the @mentions of `people`, made
    links)."""
    if is_markdown:
        return markdown_html(text, bug_id, people)
    return references_html(text, bug_id, people)
