"""The reference's answer forms, made one (bugsvc/importer/forms.py)."""

import pytest

from bugsvc.importer import forms


@pytest.mark.parametrize("text", ["2024-05-01T10:00:00Z", "20240501T10:00:00",
                                  "2024-05-01 10:00:00", "2024-05-01T12:00:00+02:00",
                                  "2024-05-01T05:30:00-0430", "2024-05-01T10:00:00.123Z",
                                  "2024-05-01T10:00:00 UTC"])
def test_every_date_form_is_one_time(text):
    assert forms.when(text) == "2024-05-01 10:00:00"


def test_dates_that_are_none_or_not_dates():
    assert forms.when(None) is None and forms.when("") is None
    assert forms.when("2024-05-01") == "2024-05-01 00:00:00"
    for bad in ("yesterday", "2024-13-01T00:00:00Z", "2024-02-30"):
        with pytest.raises(forms.FormError):
            forms.when(bad)


@pytest.mark.parametrize("value, meaning", [(True, True), (False, False), (1, True), (0, False),
                                            ("1", True), ("0", False), ("true", True),
                                            ("false", False), ("", False), (None, False)])
def test_every_boolean_form(value, meaning):
    assert forms.truth(value) is meaning


def test_aliases_from_a_list_one_string_or_nothing():
    assert forms.aliases(["a", "b"]) == ["a", "b"]
    assert forms.aliases("kpanic") == ["kpanic"]
    assert forms.aliases(None) == [] and forms.aliases("") == []


def test_history_names_of_the_database_become_the_interfaces():
    rows = forms.history([{"when": "20240501T10:00:00", "who": "a@example.org", "changes": [
        {"fieldname": "bug_status", "removed": "NEW", "added": "ASSIGNED"},
        {"field_name": "bug_group", "removed": "", "added": "security"},
        {"field_name": "short_desc", "removed": "a", "added": "b"},
        {"field_name": "longdescs.isprivate", "removed": "0", "added": "1",
         "comment": {"comment_id": 77, "thetext": "..."}},
        {"field_name": "attachments.isobsolete", "removed": "0", "added": "1",
         "attachment_id": "9"}]}])
    assert [(r["field"], r["comment_id"], r["attachment_id"]) for r in rows] == [
        ("status", None, None), ("groups", None, None), ("summary", None, None),
        ("longdescs.isprivate", 77, None), ("attachments.isobsolete", None, 9)]
    assert {r["when"] for r in rows} == {"2024-05-01 10:00:00"}


def test_a_bug_in_the_import_form():
    bug = forms.bug({"id": "5", "alias": "five", "summary": "S", "is_confirmed": 1,
                     "depends_on": [9, 3], "blocks": [], "dupe_of": 0, "cc": ["a@x.org"],
                     "cc_detail": [{"name": "a@x.org", "real_name": "A"}],
                     "creation_time": "2024-01-01T00:00:00Z",
                     "last_change_time": "2024-01-02T00:00:00Z", "is_cc_accessible": "0",
                     "cf_x": "1", "deadline": "2024-02-01 00:00:00", "estimated_time": "1.5"})
    assert bug["id"] == 5 and bug["alias"] == ["five"] and bug["depends_on"] == [3, 9]
    assert bug["dupe_of"] is None and bug["is_cc_accessible"] is False
    assert bug["time"] == {"estimated_time": 1.5, "remaining_time": 0.0,
                           "deadline": "2024-02-01"}
    assert bug["custom"] == {"cf_x": "1"} and bug["real_names"] == {"a@x.org": "A"}
    assert "time" not in forms.bug({"id": 1})


def test_attachments_with_numbers_for_booleans_and_bad_data():
    item = forms.attachment({"id": 7, "bug_id": 1, "is_patch": 1, "is_private": 0,
                             "is_obsolete": "1", "data": "aGVsbG8=", "description": "old name"})
    assert (item["is_patch"], item["is_private"], item["is_obsolete"]) == (True, False, True)
    assert item["data"] == b"hello" and item["size"] == 5 and item["summary"] == "old name"
    with pytest.raises(forms.FormError):
        forms.attachment({"id": 7, "bug_id": 1, "data": "not base64!"})


class Terminal:
    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass

    def isatty(self):
        return True


def test_the_progress_bar_redraws_in_place_on_a_terminal_and_prints_lines_elsewhere():
    import io

    from bugsvc.importer.progress import Progress
    now = [0.0]

    def clock():
        return now[0]
    screen = Terminal()
    bar = Progress(screen, clock=clock)
    bar.start(200)
    now[0] = 30.0
    bar.advance(100, comments=500)
    bar.finish()
    assert screen.text.count("\r\033[K") == 3 and screen.text.endswith("\n")
    assert "100/200 bugs (500 comments)" in screen.text
    assert "200 bugs/min" in screen.text and "30s left" in screen.text
    log = io.StringIO()
    lines = Progress(log, clock=clock)
    lines.start(200)
    for _ in range(4):
        lines.advance(50)
    lines.finish()
    assert "\r" not in log.getvalue()
    assert [line.split("]")[1].split()[1] for line in log.getvalue().splitlines()] == [
        "0/200", "50/200", "100/200", "150/200", "200/200"]
