"""The head of an answer (its status line and headers), byte for byte as
waitress makes it (`WSGITask.build_response_header`), made for less.

waitress capitalises each header name part by part and formats the Date
line anew for every answer; an API answer carries eight headers, so that
was 8 to 9 microseconds of each request thread's work per request. Here
the names' capitalised forms are kept (the application sends a few dozen
names at most; past NAMES_KEPT they are made each time, not kept) and the
Date line is made once a second. What the head says, and what it sets on
the task (the normalised headers, chunked, closing the connection),
follows waitress's rules unchanged: tests/serving/test_response_head.py
compares the two over every case those rules tell apart.
"""

from operator import itemgetter

from waitress.utilities import build_http_date


NAMES_KEPT = 256

_capitalised = {}               # a header name as given -> as written
_date = (None, "")              # (the second, its Date value), swapped whole
_BY_NAME = itemgetter(0)


def _written_name(name):
    """`name` capitalised part by part, as waitress writes it."""
    written = _capitalised.get(name)
    if written is None:
        written = "-".join([part.capitalize() for part in name.split("-")])
        if len(_capitalised) < NAMES_KEPT:
            _capitalised[name] = written
    return written


def _http_date(when):
    """build_http_date(when), made once for each second."""
    global _date
    second = int(when)
    kept, text = _date
    if kept != second:
        text = build_http_date(when)
        _date = (second, text)
    return text


def response_head(task):
    """The head of `task`'s answer (a waitress WSGITask whose application
    started its response) as bytes; sets on `task` what waitress's own
    build_response_header sets: its headers normalised (Content-Length,
    Server and Date added where missing), chunked_response, and closing the
    connection after the answer where the HTTP version and headers ask."""
    version = task.version
    connection = task.request.headers.get("CONNECTION", "").lower()
    headers = []
    content_length = date = server = None
    has_body = task.has_body
    for name, value in task.response_headers:
        name = _written_name(name)
        if name == "Content-Length":
            if not has_body:
                continue
            content_length = value
        elif name == "Date":
            date = value
        elif name == "Server":
            server = value
        headers.append((name, value))
    task.response_headers = headers
    if content_length is None and task.content_length is not None and has_body:
        content_length = str(task.content_length)
        headers.append(("Content-Length", content_length))
    if version == "1.0":
        if connection == "keep-alive":
            if not content_length:
                task.set_close_on_finish()
            else:
                headers.append(("Connection", "Keep-Alive"))
        else:
            task.set_close_on_finish()
    elif version == "1.1":
        if connection == "close":
            task.set_close_on_finish()
        if not content_length:
            if has_body:
                headers.append(("Transfer-Encoding", "chunked"))
                task.chunked_response = True
            if not task.close_on_finish:
                task.set_close_on_finish()
    else:
        raise AssertionError("neither HTTP/1.0 or HTTP/1.1")
    ident = task.channel.server.adj.ident
    if not server:
        if ident:
            headers.append(("Server", ident))
    else:
        headers.append(("Via", ident or "waitress"))
    if not date:
        headers.append(("Date", _http_date(task.start_time)))
    lines = [f"HTTP/{version} {task.status}"]
    lines += [f"{name}: {value}" for name, value in sorted(headers, key=_BY_NAME)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
