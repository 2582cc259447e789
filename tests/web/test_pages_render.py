"""The pieces of markup the pages build outside the template engine: comment
text with its links, the comment list, attachment content types and file
names. Every character of what people wrote reaches the page escaped."""

import pytest

from bugsvc.web.pages import attachment, render


@pytest.mark.parametrize("text, expected", [
    ("<script>alert(1)</script> & more", "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"),
    ("see bug 12", 'see <a href="/show_bug.cgi?id=12">bug 12</a>'),
    ("Bug #7, comment 3", '<a href="/show_bug.cgi?id=7#c3">Bug #7, comment 3</a>'),
    ("as comment 2 says", 'as <a href="/show_bug.cgi?id=5#c2">comment 2</a> says'),
    ("attachment 9", '<a href="/attachment.cgi?id=9&amp;action=edit">attachment 9</a>'),
    ('go to https://x.example/a?b=1&c="2">now',
     'go to <a href="https://x.example/a?b=1&amp;c=" rel="nofollow noopener noreferrer">'
     'https://x.example/a?b=1&amp;c=</a>"2"&gt;now'),
    ("javascript:alert(1) and data:text/html,x", "javascript:alert(1) and data:text/html,x"),
    ("debug 5 is no bug", "debug 5 is no bug"),
])
def test_comment_text_is_escaped_and_linked(text, expected):
    assert str(render.comment_html(text, 5)) == expected


def test_the_comment_list_escapes_its_authors_and_marks_private_ones():
    comments = [{"id": 10, "count": 0, "creator": "<b>x@example.com</b>", "is_private": False,
                 "creation_time": "2026-01-02T03:04:05Z", "text": "first"},
                {"id": 11, "count": 1, "creator": "y@example.com", "is_private": True,
                 "creation_time": "2026-01-02T03:04:06Z", "text": "<i>second</i>"}]
    html = str(render.comment_list(comments, 5, private_boxes=True))
    assert "&lt;b&gt;x@example.com&lt;/b&gt;" in html and "<b>" not in html
    assert "&lt;i&gt;second&lt;/i&gt;" in html
    assert 'id="c1" class="comment private"' in html and "2026-01-02 03:04 UTC" in html
    assert 'name="comment_private" value="11" checked' in html
    assert 'name="comment_private" value="10">' in html
    assert "comment_private" not in str(render.comment_list(comments, 5, private_boxes=False))


@pytest.mark.parametrize("stated, served", [
    ("text/plain", ("text/plain; charset=UTF-8", True)),
    ("TEXT/PLAIN; charset=latin1", ("text/plain; charset=UTF-8", True)),
    ("text/x-python", ("text/plain; charset=UTF-8", True)),
    ("image/jpeg", ("image/jpeg", True)),
    ("image/svg+xml", ("application/octet-stream", False)),
    ("text/html", ("application/octet-stream", False)),
    ("text/xml", ("application/octet-stream", False)),
    ("application/javascript", ("application/octet-stream", False)),
    ("application/pdf", ("application/octet-stream", False)),
    ("", ("application/octet-stream", False)),
])
def test_only_text_and_raster_images_are_shown_inline(stated, served):
    assert attachment.served_type(stated) == served


def test_file_names_cannot_break_the_disposition_header():
    value = attachment.disposition(False, 'évil"\r\n; name=x.html')
    assert value.startswith('attachment; filename="')
    assert "\r" not in value and "\n" not in value and value.count('"') == 2
    assert "filename*=UTF-8''%C3%A9vil%22%0D%0A%3B%20name%3Dx.html" in value
