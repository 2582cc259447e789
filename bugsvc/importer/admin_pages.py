"""What only Bugzilla 5.2's administration pages show: products' group
controls and the grants between groups.

Bugzilla 5.2's REST interface shows neither. A product's group controls
are on editproducts.cgi?action=editgroupcontrols (to an account in
editcomponents); a group's grants (the groups whose members are members of
it, may bless it, or see its members) on editgroups.cgi?action=changeform
(to an account in creategroups; the visibility grants only while the
parameter usevisibilitygroups is on). Both need a session signed in with a
password (an API key opens no web session). The sign-in is 5.2's own
form: the page first answers with the form and a
Bugzilla_login_request_cookie, the form goes back with its
Bugzilla_login_token and the password (restricted to this address), and
the Bugzilla_login and Bugzilla_logincookie cookies it sets open the
session; it is closed (index.cgi?logout=1) at the end. The password is
only ever sent to the host the import reads, whatever the form's action
says.

On the group controls page each bug group is a row: its name, the Entry, Canedit,
editcomponents, canconfirm and editbugs boxes and the MemberControl and
OtherControl choices (NA, Shown, Default, Mandatory: 0 to 3), or
"Disabled" for an inactive group, whose controls the page does not show.

On a group's page each grant list is a pair of multiple selects, the
groups it may add (`<list>_add`) and those it holds (`<list>_remove`),
each option a group's id and name; the lists read are those of the groups
granting something to it: `members`, `bless_from` and `visible_from`.
"""

from html.parser import HTMLParser
from http.cookies import CookieError, SimpleCookie


_CONTROLS_PAGE = "editproducts.cgi"
_GROUP_PAGE = "editgroups.cgi"
_BOXES = ("entry", "canedit", "editcomponents", "canconfirm", "editbugs")
_CHOICES = ("membercontrol", "othercontrol")
# A group's page: the lists of groups granting it something, by Bugzilla's
# grant type (0 member, 1 bless, 2 visibility).
GRANT_LISTS = {"members": 0, "bless_from": 1, "visible_from": 2}


class PagesRefused(Exception):
    """The pages could not be read (the sign-in failed, the account may not
    edit the product, the page is not the one expected): the reason."""


class AdminPages:
    """A signed-in session on a Bugzilla's administration pages (signed in
    on the first page read, closed by close()).

    client: the run's Client. login, password: the account's at the source.
    """

    def __init__(self, client, login, password):
        self.client = client
        self.login = login
        self.password = password
        self.cookies = None

    def controls(self, product):
        """{group name: {entry, membercontrol, othercontrol, canedit,
        editcomponents, canconfirm, editbugs}} of `product`, and the names
        of its inactive groups (whose controls the page does not show).
        Errors: PagesRefused, SourceError."""
        return _read_controls(self._page(_CONTROLS_PAGE, {"action": "editgroupcontrols",
                                                           "product": product}))

    def grants(self, group_id):
        """{grant type: [names of the groups granting it to the group whose
        id at the source is `group_id`]}: 0, the groups whose members are
        members of it; 1, those whose members may bless it; 2, those whose
        members see its members (absent when the page does not show the
        visibility grants: usevisibilitygroups is off at the source).
        Errors: PagesRefused, SourceError."""
        page = self._page(_GROUP_PAGE, {"action": "changeform", "group": group_id})
        parser = _GroupGrants()
        parser.feed(page.text)
        if not parser.is_page:
            raise PagesRefused(f"the source answered '{(parser.title or '').strip()}' instead of "
                               "the group's page")
        return {GRANT_LISTS[name]: names for name, names in parser.lists.items()}

    def _page(self, path, params):
        """The page `path` with `params`, signing in first when needed."""
        if self.cookies is None:
            return self._sign_in(path, params)
        return self.client.page(path, params, cookies=self.cookies)

    def _sign_in(self, path, params):
        first = self.client.page(path, params)
        form = _Form.of(first.text)
        if form is None:
            raise PagesRefused(f"the page offered no sign-in form ({_title(first.text)})")
        fields = dict(form.hidden)
        fields.update(Bugzilla_login=self.login, Bugzilla_password=self.password,
                      Bugzilla_restrictlogin="on", GoAheadAndLogIn="Log in")
        page = self.client.page(path, form=fields, cookies=_cookies(first))
        session = _cookies(page)
        if not session.get("Bugzilla_login") or not session.get("Bugzilla_logincookie"):
            raise PagesRefused(f"signing in as {self.login} failed ({_title(page.text)})")
        self.cookies = {name: session[name] for name in ("Bugzilla_login",
                                                         "Bugzilla_logincookie")}
        return page

    def close(self):
        """Sign out (the source forgets the session)."""
        if self.cookies is not None:
            self.client.page("index.cgi", {"logout": 1}, cookies=self.cookies)
            self.cookies = None


def _cookies(page):
    found = {}
    for header in page.header_values("Set-Cookie"):
        try:
            cookie = SimpleCookie(header)
        except CookieError:
            continue
        for name, morsel in cookie.items():
            if "expires=thu, 01-jan-1970" not in header.lower():
                found[name] = morsel.value
    return found


def _title(text):
    parser = _Controls()
    parser.feed(text)
    return (parser.title or "a page without a title").strip()


def _read_controls(page):
    parser = _Controls()
    parser.feed(page.text)
    if not parser.is_page:
        raise PagesRefused(f"the source answered '{(parser.title or '').strip()}' instead of "
                           "the group controls")
    return parser.controls, parser.disabled


class _Form(HTMLParser):
    """The sign-in form of a page: its hidden fields."""

    def __init__(self):
        super().__init__()
        self.hidden = {}
        self.has_login = False
        self._in_form = False

    @classmethod
    def of(cls, text):
        parser = cls()
        parser.feed(text)
        return parser if parser.has_login else None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._in_form = True
        elif tag == "input" and self._in_form:
            if attrs.get("name") == "Bugzilla_login":
                self.has_login = True
            elif (attrs.get("type") or "").lower() == "hidden" and attrs.get("name"):
                self.hidden[attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form" and not self.has_login:
            self._in_form = False
            self.hidden = {}


class _AdminPage(HTMLParser):
    """An administration page: its title, and whether its form is the one
    expected (an `action` input of value ACTION). Subclasses read the rest
    in start(), data() and end()."""

    ACTION = ""

    def __init__(self):
        super().__init__()
        self.title = None
        self.is_page = False
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "title":
            self._in_title, self.title = True, ""
        elif tag == "input" and attrs.get("name") == "action" \
                and attrs.get("value") == self.ACTION:
            self.is_page = True
        else:
            self.start(tag, attrs)

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        self.data(data)

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        else:
            self.end(tag)

    def start(self, tag, attrs):
        """A start tag other than the title and the action (attrs: a dict)."""

    def data(self, data):
        """Text, the title's too."""

    def end(self, tag):
        """An end tag other than the title's."""


class _Controls(_AdminPage):
    """The rows of editgroupcontrols."""

    ACTION = "updategroupcontrols"

    def __init__(self):
        super().__init__()
        self.controls = {}
        self.disabled = []
        self._row = None
        self._cell = None
        self._select = None

    def start(self, tag, attrs):
        if tag == "tr":
            self._row = {"cells": [], "values": {}}
        elif self._row is None:
            return
        elif tag == "td":
            self._cell = ""
        elif tag == "input" and (attrs.get("type") or "").lower() == "checkbox":
            kind = (attrs.get("name") or "").rsplit("_", 1)[0]
            if kind in _BOXES:
                self._row["values"][kind] = int("checked" in attrs)
        elif tag == "select":
            kind = (attrs.get("name") or "").rsplit("_", 1)[0]
            self._select = kind if kind in _CHOICES else None
        elif tag == "option" and self._select and "selected" in attrs:
            value = str(attrs.get("value") or "").strip()
            if value.isdigit() and int(value) <= 3:
                self._row["values"][self._select] = int(value)

    def data(self, data):
        if self._cell is not None:
            self._cell += data

    def end(self, tag):
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row["cells"].append(" ".join(self._cell.split()))
            self._cell = None
        elif tag == "select":
            self._select = None
        elif tag == "tr" and self._row is not None:
            row, self._row = self._row, None
            if not row["cells"] or not row["cells"][0]:
                return
            name = row["cells"][0]
            if len(row["cells"]) > 1 and row["cells"][1] == "Disabled":
                self.disabled.append(name)
            elif all(kind in row["values"] for kind in _CHOICES):
                self.controls[name] = {kind: row["values"].get(kind, 0)
                                       for kind in _BOXES + _CHOICES}


class _GroupGrants(_AdminPage):
    """The grant lists of editgroups.cgi?action=changeform: the options of
    the `<list>_remove` selects of GRANT_LISTS, by list."""

    ACTION = "postchanges"

    def __init__(self):
        super().__init__()
        self.lists = {}
        self._list = None
        self._option = None

    def start(self, tag, attrs):
        if tag == "select":
            name = attrs.get("name") or ""
            kind = name[:-len("_remove")] if name.endswith("_remove") else None
            self._list = kind if kind in GRANT_LISTS else None
            if self._list:
                self.lists.setdefault(self._list, [])
        elif tag == "option" and self._list:
            self._end_option()          # an option need not be closed
            self._option = ""

    def data(self, data):
        if self._option is not None:
            self._option += data

    def end(self, tag):
        if tag == "option":
            self._end_option()
        elif tag == "select":
            self._end_option()
            self._list = None

    def _end_option(self):
        if self._option is not None:
            name = " ".join(self._option.split())
            if name:
                self.lists[self._list].append(name)
            self._option = None
