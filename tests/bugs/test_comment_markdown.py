"""Markdown comments: is_markdown through every way a comment is written
and read (as bugzilla.mozilla.org carries it), the safe rendering on the bug
page (raw HTML shown as text, no script, no event handlers, no javascript:
or data: links, whatever the nesting), the references still made links,
plain text for old comments, the preference that the comment forms start
with, the mail carrying the source text, and Preview that stores nothing."""

import cProfile
import json
import pathlib
import pstats
import re
import tracemalloc

import pytest

from accounts import ADMIN
from bug_support import file_bug, update_bug
from bugsvc.bugs import markup
from bugsvc.services import comment as comment_service, user as user_service
from bugsvc.web.pages import render
from conftest import world_fixture
from notify_support import deliver, use_smtp
from page_support import INSIDER, PLAIN, Browser, World, signed_in


@world_fixture
def world(services):
    return World(services)


def comments(services, bug_id, as_user=ADMIN):
    return services.call(comment_service.comments, {"ids": [bug_id]}, as_user=as_user,
                         write=False)["bugs"][str(bug_id)]["comments"]


# Hostile Markdown: each of these must render to nothing that runs.
HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "<div><p><b onclick='alert(1)'>nested <i>html</i></b></p></div>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](  javascript:alert(1)  )",
    "[click](java\tscript:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    "[ref][r]\n\n[r]: javascript:alert(1)",
    "[ref][r]\n\n[r]: data:text/html,<script>alert(1)</script>",
    "<javascript:alert(1)>",
    "<data:text/html,alert(1)>",
    "![img](javascript:alert(1))",
    "![img](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    '![x](http://example.com/a.png "title" onerror="alert(1)")',
    '[x](http://example.com/ "a" onmouseover="alert(1)")',
    "```\n<script>alert(1)</script>\n```",
    "`<script>alert(1)</script>`",
    "<style>body{display:none}</style><iframe src=//evil></iframe>",
    "<svg><script>alert(1)</script></svg><math><mtext></mtext></math>",
    "<!-- <script>alert(1)</script> -->",
    "<form action=//evil><button formaction=javascript:alert(1)>x</button></form>",
    "| a | b |\n|---|---|\n| <script>alert(1)</script> | [x](javascript:alert(1)) |",
]


def deep(n):
    """Nesting far beyond anything a person writes (at n = 10,000, within the
    comment size limit), and the runs of delimiters that cost the parser most
    for their size."""
    return ["> " * n + "x", "[" * n + "x" + "]" * n, "*" * (3 * n) + "x" + "*" * (3 * n),
            "- " * n + "x", "<div>" * n, "`" * (3 * n), "[a](" * (n // 2) + "x" + ")" * (n // 2),
            "\n".join("> " * k + "q" for k in range(0, n // 50)), "![" * n,
            "*_" * n + "x"]


DEEP = deep(10000)
# What rendering may allocate at its peak for each character of a comment
# (the worst, a run of emphasis delimiters, takes about 470 bytes): at the
# 65,535-character limit of a comment, tens of megabytes at most.
PEAK_BYTES_PER_CHARACTER = 600


_TAG = re.compile(r"<\s*([a-zA-Z][a-zA-Z0-9]*)([^>]*)>")
_ALLOWED_TAGS = {"p", "br", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol",
                 "li", "h3", "hr", "a", "table", "thead", "tbody", "tr", "th", "td"}


def assert_inert(html):
    """Nothing in `html` that a browser would run or load: only the
    elements Markdown makes, no event handler or style, links only to web
    and mail addresses and addresses on this site (no scheme)."""
    for name, attributes in _TAG.findall(html):
        assert name.lower() in _ALLOWED_TAGS, (name, html[:200])
        for attribute, value in re.findall(r'([\w:-]+)\s*=\s*"([^"]*)"', attributes):
            assert attribute.lower() in ("href", "rel", "title", "start"), (attribute, html[:200])
            if attribute.lower() == "href":
                scheme = re.match(r"^\s*([a-zA-Z][\w+.-]*):", value)
                assert scheme is None or scheme.group(1).lower() in ("http", "https", "mailto"), \
                    value
    assert "javascript:" not in re.sub(r">[^<]*<", "><", html).lower()


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_markdown_renders_nothing_that_runs(text):
    html = markup.markdown_html(text, 1)
    assert_inert(html)
    assert "<script" not in html.lower()


def test_raw_html_in_markdown_is_shown_as_text_not_even_harmless_tags():
    html = markup.markdown_html("Say <b>hello</b> and <em>bye</em>", 1)
    assert html == "<p>Say &lt;b&gt;hello&lt;/b&gt; and &lt;em&gt;bye&lt;/em&gt;</p>\n"


@pytest.mark.parametrize("text", DEEP)
def test_huge_nesting_is_bounded(text):
    """However deep the input nests, the output nests no deeper than the
    renderer's limit, and rendering makes a bounded number of tokens (a
    count, not a time)."""
    assert len(text) <= 65535
    tokens = markup._MARKDOWN.parse(text, {"bug_id": 1})
    count = len(tokens) + sum(len(token.children or ()) for token in tokens)
    assert count <= 4 * len(text) + 10
    html = markup.markdown_html(text, 1)
    assert_inert(html)
    assert html.count("<blockquote>") <= markup.MAX_NESTING
    assert html.count("<ul>") <= markup.MAX_NESTING
    assert len(html) <= 10 * len(text) + 100


@pytest.mark.parametrize("text", deep(1000), ids=range(len(DEEP)))
def test_huge_nesting_allocates_at_most_a_bounded_multiple_of_its_size(text):
    """The peak of what rendering allocates (tracemalloc, which slows it
    down: measured at a tenth of the size; the parse is linear, see the
    token counts above) stays under PEAK_BYTES_PER_CHARACTER a character."""
    markup.markdown_html(text, 1)
    tracemalloc.start()
    try:
        markup.markdown_html(text, 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= PEAK_BYTES_PER_CHARACTER * len(text) + 100_000, peak


def costly(n):
    """Texts of about `n` characters whose links and images markdown-it looks
    for again and again: runs of "[" and "![" (each looks for its "]" through
    all the others), addresses read up to 32 unclosed "(" each, and the like."""
    return ["[" * n, "![" * (n // 2), "[![" * (n // 3), "[\n" * (n // 2), "[x][" * (n // 4),
            "[" * (n // 2) + "x" + "]" * (n // 2), "[a](" * (n // 8) + "x" + ")" * (n // 8),
            "[](" * (n // 3), "[x](" * (n // 4), "[](a\\\n" * (n // 6), "[*a" * (n // 3),
            "[a`b`" * (n // 6), "[a](<" * (n // 5), "[a]: <" * (n // 6)]


def render_work(text):
    """(steps of markdown-it's link scanning, all calls of functions) made
    to render `text`: the steps are its calls of the functions that step
    over a token of a link's text (ParserInline.skipToken) and that read a
    character of a link's address or title (charCodeAt). Counts, not times:
    the same on every machine."""
    profile = cProfile.Profile()
    profile.runcall(markup.markdown_html, text, 1)
    stats = pstats.Stats(profile)
    steps = sum(calls for (_, _, name), (_, calls, *_) in stats.stats.items()
                if name in ("skipToken", "charCodeAt"))
    return steps, stats.total_calls


@pytest.mark.parametrize("index", range(len(costly(8))))
def test_looking_for_links_costs_a_few_steps_a_character_whatever_the_brackets(index):
    """Each text of costly() makes markdown-it scan for links at most a few
    steps a character (unbounded, 10 to 40: over a second of CPU at the size
    limit of a comment), and the whole rendering grows in step with its
    size; what it renders is inert."""
    small, large = costly(2048)[index], costly(4 * 2048)[index]
    small_work, large_work = render_work(small), render_work(large)
    # (Steps counted at all: markdown-it still has the functions counted.)
    assert small_work[0] > 0
    for text, (steps, _) in ((small, small_work), (large, large_work)):
        assert steps <= 3 * len(text) + 1000, (text[:20], steps / len(text))
        assert_inert(markup.markdown_html(text, 1))
    assert large_work[1] <= 4.5 * small_work[1]


def test_past_the_link_budget_brackets_are_text_and_earlier_links_still_links():
    n = 65535 // 2
    assert markup.markdown_html("![" * n, 1) == "<p>" + "![" * n + "</p>\n"
    assert markup.markdown_html("[" * 65535, 1) == "<p>" + "[" * 65535 + "</p>\n"
    html = markup.markdown_html("See [the log](https://example.com/log).\n\n" + "[![" * 20000
                                + "\n\nand [late](https://example.com/late)", 1)
    assert html.startswith('<p>See <a href="https://example.com/log" '
                           'rel="nofollow noopener noreferrer">the log</a>.</p>')
    assert "[![" * 20000 in html
    # A link found after the budget is spent is text, its address still a link.
    assert html.endswith('<p>and [late](<a href="https://example.com/late" '
                         'rel="nofollow noopener noreferrer">https://example.com/late</a>)</p>\n')


# Ordinary Markdown with the HTML (and @mentions) the renderer made of it
# before link scanning had a budget.
ORDINARY = json.loads((pathlib.Path(__file__).parent.parent / "data" / "markdown"
                       / "ordinary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_markdown_renders_as_before(case):
    people = {"dev": ("dev@example.com", "Dana Dev")}
    assert markup.markdown_html(case["text"], 7, people) == case["html"]
    assert markup.mention_names(case["text"], True) == case["mentions"]


def test_an_ordinary_comment_at_the_size_limit_is_within_the_link_budget(monkeypatch):
    """The ordinary texts together, repeated up to a comment's size limit,
    render the same with an unlimited budget: the budget only ever cuts
    what no person writes."""
    text = "\n\n".join(case["text"] for case in ORDINARY)
    text = (text + "\n\n") * (65535 // (len(text) + 2))
    assert 60000 < len(text) <= 65535
    bounded = markup.markdown_html(text, 7)
    monkeypatch.setattr(markup, "LINK_SCAN_BUDGET_PER_CHARACTER", 10 ** 6)
    assert markup.markdown_html(text, 7) == bounded


def test_markdown_makes_its_structure_and_references_still_link_but_not_in_code():
    html = markup.markdown_html(
        "# Crash\n\n*See* bug 12 comment 3, comment 2 and attachment 7.\n\n"
        "`bug 99` stays code\n\n```\nattachment 5\n```\n\n[bug 4](https://example.com/x)", 10)
    assert "<h3>Crash</h3>" in html and "<em>See</em>" in html
    assert '<a href="/show_bug.cgi?id=12#c3"' in html
    assert '<a href="/show_bug.cgi?id=10#c2"' in html
    assert '<a href="/attachment.cgi?id=7&amp;action=edit"' in html
    assert "<code>bug 99</code>" in html and "<pre><code>attachment 5\n</code></pre>" in html
    # No link inside a link: the text of a Markdown link stays its text.
    assert '<a href="https://example.com/x" rel="nofollow noopener noreferrer">bug 4</a>' in html


def test_an_image_is_a_link_to_it_and_loads_nothing():
    html = markup.markdown_html("![the trace](https://example.com/t.png)", 1)
    assert "<img" not in html
    assert '<a href="https://example.com/t.png" rel="nofollow noopener noreferrer">the trace</a>' \
        in html


# The interface -------------------------------------------------------------------------

def test_is_markdown_is_stored_and_answered_by_every_way_in(services, client, admin_key):
    bug_id = file_bug(services, description="**Steps**", is_markdown=True)
    services.call(comment_service.add, {"id": bug_id, "comment": "*one*", "is_markdown": True},
                  as_user=ADMIN)
    services.call(comment_service.add, {"id": bug_id, "comment": "*two*"}, as_user=ADMIN)
    update_bug(services, bug_id, comment={"body": "*three*", "is_markdown": True})
    resp = client.simulate_post(f"/rest/bug/{bug_id}/comment",
                                json={"comment": "_four_", "is_markdown": True},
                                headers={"X-BUGZILLA-API-KEY": admin_key})
    assert resp.status_code == 201
    listed = client.simulate_get(f"/rest/bug/{bug_id}/comment").json["bugs"][str(bug_id)]
    assert [(c["text"], c["is_markdown"]) for c in listed["comments"]] == [
        ("**Steps**", True), ("*one*", True), ("*two*", False), ("*three*", True),
        ("_four_", True)]
    one = listed["comments"][1]["id"]
    by_id = client.simulate_get(f"/rest/bug/comment/{one}").json["comments"][str(one)]
    assert by_id["is_markdown"] is True and by_id["text"] == "*one*"


def test_the_bug_create_parameter_has_bugzilla_mozilla_orgs_name_and_the_internal_one(services):
    first = file_bug(services, description="a", is_markdown=True)
    second = file_bug(services, description="b", comment_is_markdown=True)
    plain = file_bug(services, description="c")
    assert [comments(services, b)[0]["is_markdown"] for b in (first, second, plain)] == [
        True, True, False]


def test_system_comments_are_never_markdown(services):
    bug_id = file_bug(services)
    other = file_bug(services)
    update_bug(services, bug_id, status="RESOLVED", resolution="DUPLICATE", dupe_of=other,
               comment={"body": "*same*", "is_markdown": True})
    assert [c["is_markdown"] for c in comments(services, bug_id)] == [False, False]
    assert [c["is_markdown"] for c in comments(services, other)] == [False, False]


# The pages -----------------------------------------------------------------------------

def test_a_markdown_comment_is_rendered_and_an_old_comment_stays_plain(app, world, services):
    services.call(comment_service.add, {"id": world.bug, "is_markdown": True, "comment":
                                        "**bold** <script>alert(1)</script> [x](javascript:y)"},
                  as_user=ADMIN)
    services.call(comment_service.add, {"id": world.bug, "comment": "**not bold** bug 3"},
                  as_user=ADMIN)
    page = Browser(app).get(f"/show_bug.cgi?id={world.bug}").text
    assert '<div class="comment-text markdown"><p><strong>bold</strong> ' \
           "&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:y)</p>" in page
    assert '<pre class="comment-text">**not bold** <a href="/show_bug.cgi?id=3">bug 3</a></pre>' \
        in page
    assert "<script>alert" not in page and 'href="javascript' not in page


def test_the_comment_form_starts_as_the_accounts_preference(app, world, services):
    browser = signed_in(app, PLAIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}").text
    assert re.search(r'id="comment_is_markdown"[^>]* checked', page)   # the default: on
    result = browser.post("/userprefs.cgi", {"tab": "account", "realname": "Pat Plain",
                                             "comment_markdown_shown": "1"})
    assert result.status_code == 200
    assert services.call(user_service.whoami, {}, as_user=PLAIN)["comment_markdown"] is False
    page = browser.get(f"/show_bug.cgi?id={world.bug}").text
    assert not re.search(r'id="comment_is_markdown"[^>]* checked', page)
    assert not re.search(r'id="comment_is_markdown"[^>]* checked',
                         browser.get("/enter_bug.cgi?product=TestProduct").text)
    browser.post("/userprefs.cgi", {"tab": "account", "realname": "Pat Plain",
                                    "comment_markdown_shown": "1", "comment_markdown": "1"})
    assert services.call(user_service.whoami, {}, as_user=PLAIN)["comment_markdown"] is True


def test_the_bug_form_posts_a_markdown_comment_or_a_plain_one(app, world, services):
    browser = signed_in(app, PLAIN)
    for text, markdown in (("*md*", "1"), ("*plain*", None)):
        page = browser.get(f"/show_bug.cgi?id={world.bug}")
        fields = {"id": str(world.bug), "comment": text,
                  "update_token": re.search(r'name="update_token" value="([^"]+)"',
                                            page.text).group(1)}
        if markdown:
            fields["comment_is_markdown"] = markdown
        assert browser.post("/process_bug.cgi", fields).status_code == 200
    last_two = comments(services, world.bug)[-2:]
    assert [(c["text"], c["is_markdown"]) for c in last_two] == [
        ("*md*", True), ("*plain*", False)]


def _stored(services):
    return (services.query("SELECT COUNT(*) FROM comments")[0][0],
            services.query("SELECT COUNT(*) FROM outbox_events")[0][0],
            services.query("SELECT COUNT(*) FROM bugs")[0][0])


def test_preview_shows_the_rendered_comment_keeps_the_text_and_stores_nothing(
        app, world, services):
    browser = signed_in(app, PLAIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    token = re.search(r'name="update_token" value="([^"]+)"', page.text).group(1)
    before = _stored(services)
    typed = "**Look** at comment 1 <img src=x onerror=alert(1)>"
    result = browser.post("/process_bug.cgi", {
        "id": str(world.bug), "update_token": token, "comment": typed,
        "comment_is_markdown": "1", "preview": "1", "priority": "Highest"})
    assert result.status_code == 200
    assert _stored(services) == before
    preview = result.text[result.text.index('id="comment-preview"'):result.text.index(
        'id="comment"')]
    assert "<strong>Look</strong>" in preview
    assert f'<a href="/show_bug.cgi?id={world.bug}#c1"' in preview
    assert "&lt;img src=x onerror=alert(1)&gt;" in preview and "<img" not in preview
    assert ('<textarea id="comment" name="comment" rows="8" cols="80" accesskey="c">'
            "**Look** at comment 1 &lt;img src=x onerror=alert(1)&gt;</textarea>") in result.text
    assert re.search(r'id="comment_is_markdown"[^>]* checked', result.text)
    # The same as plain text: no Markdown, and the box comes back unticked.
    result = browser.post("/process_bug.cgi", {
        "id": str(world.bug), "update_token": token, "comment": "**Look**", "preview": "1"})
    assert '<pre class="comment-text">**Look**</pre>' in result.text
    assert not re.search(r'id="comment_is_markdown"[^>]* checked', result.text)
    assert _stored(services) == before


def test_preview_needs_the_forms_token_and_a_signed_in_visitor(app, world, services):
    browser = signed_in(app, PLAIN)
    browser.get(f"/show_bug.cgi?id={world.bug}")
    before = _stored(services)
    refused = browser.post("/process_bug.cgi", {"id": str(world.bug), "comment": "x",
                                                "preview": "1", "csrf_token": "forged"})
    assert refused.status_code == 403 and 'id="comment-preview"' not in refused.text
    anonymous = Browser(app)
    anonymous.get(f"/show_bug.cgi?id={world.bug}")
    result = anonymous.post("/process_bug.cgi", {"id": str(world.bug), "comment": "x",
                                                 "preview": "1"})
    assert result.status_code in (401, 403) and "comment-preview" not in result.text
    assert _stored(services) == before


def test_preview_of_a_hidden_bug_shows_nothing_of_it(app, world, services):
    browser = signed_in(app, PLAIN)
    browser.get(f"/show_bug.cgi?id={world.bug}")
    result = browser.post("/process_bug.cgi", {"id": str(world.secret), "comment": "x",
                                               "preview": "1"})
    assert result.status_code in (401, 404) and "Secret hole" not in result.text


def test_preview_of_a_new_bugs_description_keeps_the_form_and_files_nothing(app, world,
                                                                            services):
    browser = signed_in(app, PLAIN)
    browser.get("/enter_bug.cgi?product=TestProduct")
    before = _stored(services)
    result = browser.post("/post_bug.cgi", {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "Half typed", "description": "- one\n- two", "comment_is_markdown": "1",
        "severity": "major", "platform": "PC", "op_sys": "Linux", "preview": "1"},
        files={"data": ("a.txt", "text/plain", b"x")})
    assert result.status_code == 200
    assert "<ul>\n<li>one</li>\n<li>two</li>\n</ul>" in result.text
    assert 'value="Half typed"' in result.text and "- one\n- two</textarea>" in result.text
    assert _stored(services) == before


# Mail ----------------------------------------------------------------------------------

def test_mail_carries_the_source_text_of_a_markdown_comment(services, smtp):
    use_smtp(services, smtp)
    services.add_user("dev@example.com", real_name="Dana Dev")
    bug_id = file_bug(services, assigned_to="dev@example.com")
    hostile = "**Hi** <script>alert(1)</script> [x](javascript:alert(1))"
    services.call(comment_service.add, {"id": bug_id, "comment": hostile, "is_markdown": True},
                  as_user=ADMIN)
    deliver(services)
    mail = smtp.to("dev@example.com")[-1]
    assert mail.get_content_type() == "text/plain" and not mail.is_multipart()
    assert hostile in mail.get_content()


def test_no_mail_of_hostile_markdown_has_anything_but_its_text(services, smtp):
    """bugsvc's mail is plain text only (no HTML part, so nothing a mail
    reader could run): the new bug's description, a comment, and the mail
    of a person @mentioned, each carrying the source text as typed."""
    use_smtp(services, smtp)
    services.add_user("dev@example.com", real_name="Dana Dev")
    services.add_user("quinn@example.com", real_name="Quinn Q A")
    everything = "\n\n".join(HOSTILE)
    bug_id = file_bug(services, assigned_to="dev@example.com", description=everything,
                      is_markdown=True)
    deliver(services)
    comment = "@quinn@example.com " + everything
    services.call(comment_service.add, {"id": bug_id, "comment": comment, "is_markdown": True},
                  as_user=ADMIN)
    services.call(comment_service.add, {"id": bug_id, "comment": DEEP[0], "is_markdown": True},
                  as_user=ADMIN)
    deliver(services)
    to_dev, to_quinn = smtp.to("dev@example.com"), smtp.to("quinn@example.com")
    assert len(to_dev) == 3 and [mail["X-Bugzilla-Reason"] for mail in to_quinn] == [
        "Mentioned"]
    for mail in to_dev + to_quinn:
        assert [part.get_content_type() for part in mail.walk()] == ["text/plain"]
    # (Tabs are expanded and long lines wrapped, as in the reference's mail.)
    text = [mail.get_content().replace("\r\n", "\n") for mail in to_dev + to_quinn]
    everything, comment = everything.expandtabs(), comment.expandtabs()
    assert everything in text[0] and comment in text[1] and comment in text[3]
    assert " ".join(DEEP[0].split()) in " ".join(text[2].split())


def test_an_insider_sees_a_private_markdown_comment_rendered_others_do_not_see_it(
        app, world, services):
    services.call(comment_service.add, {"id": world.bug, "comment": "_hush_",
                                        "is_markdown": True, "is_private": True},
                  as_user=INSIDER)
    assert "<em>hush</em>" in signed_in(app, INSIDER).get(f"/show_bug.cgi?id={world.bug}").text
    assert "hush" not in signed_in(app, PLAIN).get(f"/show_bug.cgi?id={world.bug}").text
    assert "hush" not in Browser(app).get(f"/show_bug.cgi?id={world.bug}").text


_ELEMENT = re.compile(r"<\s*[a-zA-Z][^>]*>")
_RUNS = re.compile(r"^<\s*(script|iframe|img|svg|math|style|object|embed|form|button|base|meta"
                   r"|link)\b|\son[a-z]+\s*=|(href|src|action|formaction)\s*=\s*[\"']?\s*"
                   r"(javascript|data|vbscript):", re.I)


def runnable(html):
    """The elements of `html` (its tags, not its text) that a browser would
    run or load something for."""
    return [tag for tag in _ELEMENT.findall(html) if _RUNS.search(tag)]


def comment_region(page):
    """The list of comments of a bug page, as HTML."""
    start = page.index('<ol class="comments">')
    return page[start:page.index("</ol>", start)]


def markdown_blocks(html):
    """The rendered Markdown texts (comments or previews) of `html`."""
    return re.findall(r'<div class="comment-text markdown">(.*?)</div>', html, re.S)


def test_every_hostile_comment_is_inert_on_the_bug_page_whoever_looks(app, world, services):
    for text in HOSTILE:
        services.call(comment_service.add, {"id": world.bug, "comment": text,
                                            "is_markdown": True}, as_user=ADMIN)
    services.call(comment_service.add, {"id": world.bug, "comment": "\n\n".join(HOSTILE),
                                        "is_markdown": True, "is_private": True},
                  as_user=INSIDER)
    for who, shown in ((None, len(HOSTILE)), (PLAIN, len(HOSTILE)), (INSIDER, len(HOSTILE) + 1)):
        browser = signed_in(app, who) if who else Browser(app)
        page = browser.get(f"/show_bug.cgi?id={world.bug}").text
        blocks = markdown_blocks(page)
        assert len(blocks) == shown, who
        for block in blocks:
            assert_inert(block)
        assert runnable(comment_region(page)) == []


def test_huge_nesting_on_the_bug_page_is_shown_bounded_and_inert(app, world, services):
    bug_id = file_bug(services, summary="Deep")
    # A fifth of the size: the renderer's bounds at full size are above.
    texts = deep(2000)
    for text in texts:
        services.call(comment_service.add, {"id": bug_id, "comment": text, "is_markdown": True},
                      as_user=ADMIN)
    page = Browser(app).get(f"/show_bug.cgi?id={bug_id}").text
    blocks = markdown_blocks(page)
    assert len(blocks) == len(texts)
    for block in blocks:
        assert_inert(block)
        assert block.count("<blockquote>") <= markup.MAX_NESTING
    assert runnable(comment_region(page)) == []


def test_a_bug_page_parses_its_markdown_comments_once_not_on_every_view(
        app, world, services, monkeypatch):
    """The rendered comments and the names a Markdown comment @mentions are
    kept (pages/render.py COMMENTS): a signed-in visitor's next views of
    the bug parse none of its comments again, however costly they are."""
    hostile = "@admin look: " + "[x][" * 2000 + " " + "![" * 4000
    services.call(comment_service.add, {"id": world.bug, "comment": hostile,
                                        "is_markdown": True}, as_user=ADMIN)
    # The memo is the process's: the same test on the other engine, in this
    # process before, left this very text rendered in it.
    render.COMMENTS.clear()
    parses = []
    parse = markup._MARKDOWN.parse
    monkeypatch.setattr(markup._MARKDOWN, "parse",
                        lambda text, env=None: parses.append(text) or parse(text, env))
    browser = signed_in(app, PLAIN)
    first = browser.get(f"/show_bug.cgi?id={world.bug}").text
    assert parses.count(hostile) >= 1 and "![" * 4000 in first
    parses.clear()
    again = browser.get(f"/show_bug.cgi?id={world.bug}").text
    assert parses == [] and "![" * 4000 in again
    assert markdown_blocks(again) == markdown_blocks(first)


def test_the_preview_and_render_comment_of_hostile_markdown_are_inert(app, world, services,
                                                                      client):
    browser = signed_in(app, PLAIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    token = re.search(r'name="update_token" value="([^"]+)"', page.text).group(1)
    before = _stored(services)
    result = browser.post("/process_bug.cgi", {
        "id": str(world.bug), "update_token": token, "comment": "\n\n".join(HOSTILE),
        "comment_is_markdown": "1", "preview": "1"})
    preview = result.text[result.text.index('id="comment-preview"'):result.text.index(
        'id="comment"')]
    [block] = markdown_blocks(preview)
    assert_inert(block)
    assert runnable(block) == []
    assert _stored(services) == before
    for text in HOSTILE:
        resp = client.simulate_post("/rest/bug/comment/render",
                                    json={"id": world.bug, "text": text, "is_markdown": True})
        assert resp.status_code == 200
        assert_inert(resp.json["html"])
        assert runnable(resp.json["html"]) == [], text


# Bug.render_comment ---------------------------------------------------------------------

def test_render_comment_shows_a_text_as_a_comment_of_the_bug_and_stores_nothing(
        services, client):
    bug_id = file_bug(services)
    before = services.query("SELECT COUNT(*) FROM comments")[0][0]
    resp = client.simulate_post("/rest/bug/comment/render",
                                json={"id": bug_id, "text": "*see* comment 1 <b>x</b>",
                                      "is_markdown": True})
    assert resp.status_code == 200
    assert resp.json == {"html": f'<p><em>see</em> <a href="/show_bug.cgi?id={bug_id}#c1"'
                                 ' rel="nofollow noopener noreferrer">comment 1</a>'
                                 " &lt;b&gt;x&lt;/b&gt;</p>\n"}
    plain = client.simulate_post("/rest/bug/comment/render", json={"text": "<b>x</b> bug 2"})
    assert plain.json == {"html": '&lt;b&gt;x&lt;/b&gt; <a href="/show_bug.cgi?id=2">bug 2</a>'}
    assert services.query("SELECT COUNT(*) FROM comments")[0][0] == before


def test_render_comment_refuses_what_the_caller_may_not_see_and_bad_input(services, client):
    """A hidden bug and a missing one answer alike (102) to an anonymous caller."""
    from bug_support import NA, SHOWN, add_bug_group, control
    group = add_bug_group(services, "secret")          # only the administrator
    control(services, group, SHOWN, NA)
    hidden = file_bug(services, groups=["secret"])
    for body, code in (({"id": hidden, "text": "x"}, 102), ({"id": 99999, "text": "x"}, 102),
                       ({"id": 1}, 50), ({"text": "x" * 70000}, 114)):
        resp = client.simulate_post("/rest/bug/comment/render", json=body)
        assert resp.json["code"] == code, body
