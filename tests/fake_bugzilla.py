"""A Bugzilla 5.2 on loopback that answers from recorded answers
(tests/data/bugzilla-5.2/answers.json, whose `_about` says where they come
from), for the calls an import makes, as Apache with mod_perl and
mod_deflate serves them.

Batches are composed as Bugzilla 5.2's REST layer does: the id in the path
and the `ids` of the query are one list (path first), the answer is the
union of each bug's, and one bug the caller may not see fails the whole
call with error 102 (HTTP 401). Search lists bugs by `bug_id` greater than
`v1`, as the importer pages them.

What depends on the caller (its API key, or the web session of a password
sign-in) is made from `installation` as 5.2 makes it: User.get by names,
ids and `match` (5.2's Bugzilla::User::match: `*` a wildcard over the login
or the real name, SQL LIKE underneath, so `_` matches any one character;
without `*` an exact login, else a substring of three characters or more;
at most min(`limit`, maxusermatches) accounts and no offset; groups in full
for one's own account and editusers members, else only the groups the
caller may bless), Group.get (805 unless editusers, creategroups or a
blesser; user_regexp only for creategroups; `membership` with the members
granted directly or by the regexp), the parameters (all of them for
tweakparams), personal tags in Bug.get (`tags` among include_fields),
memberships derived through the groups' inheritance (group_grants of type
0), and editproducts.cgi?action=editgroupcontrols (to editcomponents) and
editgroups.cgi?action=changeform (to creategroups; the visibility grants
only while usevisibilitygroups is on) behind 5.2's sign-in form (its
Bugzilla_login_token must match the Bugzilla_login_request_cookie; the
session is the Bugzilla_login and Bugzilla_logincookie cookies).

A test may make it misbehave: misbehave(kind, path) answers matching
requests as tests/hostile_answers.py does; keepalive_max closes each
kept-alive connection after that many answers without saying so (as
Apache's KeepAliveTimeout does to an idle one); answers over 512 bytes are
gzipped for a client that accepts it.
"""

import gzip
import html
import json
import re
import secrets
import threading
import urllib.parse
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import hostile_answers


ANSWERS = Path(__file__).resolve().parent / "data" / "bugzilla-5.2" / "answers.json"
DENIED = (401, 102, "You are not authorized to access bug #{}.")
DOCS = "https://bugzilla.readthedocs.org/en/5.2/api/"
READER_KEY, ADMIN_KEY, MANAGER_KEY = "k" * 40, "a" * 40, "m" * 40


def load():
    return json.loads(ANSWERS.read_text(encoding="utf-8"))


def error(status, code, message):
    return status, {"error": True, "code": code, "message": message, "documentation": DOCS}


class FakeBugzilla:
    """start() it, use .url, stop() it; .requests counts the calls, .paths
    lists them, .signed_in and .signed_out the web sessions."""

    def __init__(self, answers=None, keepalive_max=None):
        self.answers = answers or load()
        self.installation = self.answers["installation"]
        self.keepalive_max = keepalive_max
        self.requests = 0
        self.paths = []
        self.connections = 0
        self.signed_in, self.signed_out = [], []
        self._troubles = []
        self._sessions = {}               # (user id, login cookie) -> login
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def setup(self):
                super().setup()
                self.answered = 0
                with fake._lock:
                    fake.connections += 1

            def do_GET(self):
                fake._handle(self, "GET")

            def do_POST(self):
                fake._handle(self, "POST")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                        daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def misbehave(self, kind, path="", times=None, **settings):
        """Answer requests whose path (below /rest) starts with `path` as
        `kind` of tests/hostile_answers.py, `times` times (None: always)."""
        with self._lock:
            self._troubles.append([kind, path, times, settings])

    def behave(self):
        with self._lock:
            self._troubles.clear()

    # HTTP ----------------------------------------------------------------------

    def _handle(self, handler, method):
        parsed = urllib.parse.urlsplit(handler.path)
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        if method == "POST":
            length = int(handler.headers.get("Content-Length") or 0)
            form = urllib.parse.parse_qs(handler.rfile.read(length).decode(),
                                         keep_blank_values=True)
            query = {**query, **form}
        path = parsed.path
        with self._lock:
            self.requests += 1
            self.paths.append(path)
            trouble = self._trouble(path.removeprefix("/rest"))
        if trouble is not None:
            hostile_answers.send(handler, trouble[0], **trouble[1])
            return
        cookies = SimpleCookie(handler.headers.get("Cookie") or "")
        cookies = {name: morsel.value for name, morsel in cookies.items()}
        if path.startswith("/rest/") or path == "/rest":
            caller = self._caller(query, handler.headers)
            if isinstance(caller, tuple):
                status, body = caller
            else:
                status, body = self.answer(path.removeprefix("/rest"), query, caller)
            raw, kind, extra = json.dumps(body).encode(), "application/json", []
        else:
            status, page, extra = self._page(path.lstrip("/"), query, cookies)
            raw, kind = page.encode(), "text/html; charset=UTF-8"
        gzipped = len(raw) > 512 and "gzip" in (handler.headers.get("Accept-Encoding") or "")
        if gzipped:
            raw = gzip.compress(raw)
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        if gzipped:
            handler.send_header("Content-Encoding", "gzip")
        for name, value in extra:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)
        handler.answered += 1
        if self.keepalive_max and handler.answered >= self.keepalive_max:
            handler.close_connection = True            # without a word: no Connection: close

    def _trouble(self, path):
        for trouble in self._troubles:
            kind, prefix, times, settings = trouble
            if path.startswith(prefix) and times != 0:
                if times is not None:
                    trouble[2] -= 1
                return kind, settings
        return None

    def _caller(self, query, headers):
        """The caller's login ('' anonymous), or the (status, body) refusing
        a key that is no key."""
        key = (query.get("Bugzilla_api_key") or [headers.get("X-BUGZILLA-API-KEY") or ""])[0]
        if not key:
            return ""
        login = self.installation["keys"].get(key)
        if login is None:
            return error(400, 306, "The API key you specified is invalid.")
        return login

    # The REST interface ----------------------------------------------------------

    def answer(self, path, query, caller="reader@example.org"):
        a = self.answers
        if path == "/group":
            return self._groups(query, caller)
        if path == "/parameters":
            return self._parameters(caller)
        fixed = a.get(path if path != "/product" else f"/product?ids={','.join(query['ids'])}")
        if fixed is not None:
            return fixed.get("status", 200), fixed["body"]
        parts = path.strip("/").split("/")
        if parts == ["user"]:
            return self._users(query, caller)
        if parts == ["bug"]:
            return self._search(query)
        if parts[:2] == ["bug", "attachment"]:
            ids = [parts[2]] + query.get("attachment_ids", [])
            return 200, {"bugs": {}, "attachments": {
                i: self._attachment(i, query) for i in ids}}
        if parts[0] == "bug" and len(parts) in (2, 3):
            ids = list(dict.fromkeys([parts[1]] + query.get("ids", [])))
            for bug_id in ids:
                if bug_id not in a["bugs"]:
                    status, code, message = DENIED
                    return error(status, code, message.format(bug_id))
            kind = parts[2] if len(parts) == 3 else "bug"
            if kind == "bug":
                return 200, {"bugs": [self._bug(i, query, caller) for i in ids], "faults": []}
            if kind == "comment":
                return 200, {"bugs": {i: {"comments": a["comments"].get(i, [])} for i in ids},
                             "comments": {}}
            if kind == "history":
                return 200, {"bugs": [{"id": int(i), "alias": a["bugs"][i]["alias"],
                                       "history": a["history"].get(i, [])} for i in ids]}
            if kind == "attachment":
                return 200, {"bugs": {i: [self._with_data(att, query)
                                          for att in a["attachments"].get(i, [])] for i in ids},
                             "attachments": {}}
        return error(404, 32614, f"A REST API resource was not found for 'GET {path}'.")

    def _bug(self, bug_id, query, caller):
        bug = dict(self.answers["bugs"][bug_id])
        wanted = ",".join(query.get("include_fields", [])).split(",")
        if caller and any(name in wanted for name in ("tags", "_extra", "_all")):
            bug["tags"] = self.installation["tags"].get(caller, {}).get(bug_id, [])
        return bug

    def _search(self, query):
        after = int(query.get("v1", ["0"])[0])
        limit = int(query.get("limit", ["10000"])[0])
        since = query.get("last_change_time", [None])[0]
        found = [{"id": bug_id, "last_change_time": changed}
                 for bug_id, changed in self.answers["listing"]
                 if bug_id > after and (since is None or changed >= since)]
        return 200, {"bugs": found[:limit]}

    def _with_data(self, attachment, query):
        item = dict(attachment)
        if "data" not in query.get("exclude_fields", [""])[0]:
            item["data"] = self.answers["attachment_data"][str(item["id"])]
        return item

    def _attachment(self, attachment_id, query):
        for attachments in self.answers["attachments"].values():
            for attachment in attachments:
                if str(attachment["id"]) == str(attachment_id):
                    return self._with_data(attachment, query)
        raise KeyError(attachment_id)

    # Accounts and groups, as 5.2 shows them to the caller -------------------------

    def _account(self, login):
        found = self.installation["accounts"].get(login)
        return None if found is None else dict(found, login=login)

    def groups_of(self, login):
        """Every group the account is in: directly, by a group's regexp, or
        through the groups' inheritance (any chain)."""
        account = self.installation["accounts"][login]
        names = set(account["groups"])
        for group in self.installation["groups"]:
            if group["user_regexp"] and re.search(group["user_regexp"], login, re.IGNORECASE):
                names.add(group["name"])
        waiting = list(names)
        while waiting:
            member = waiting.pop()
            for grant_member, grantor, grant_type in self.installation["group_grants"]:
                if grant_type == 0 and grant_member == member and grantor not in names:
                    names.add(grantor)
                    waiting.append(grantor)
        return [group for group in self.installation["groups"] if group["name"] in names]

    def _in(self, login, group_name):
        return bool(login) and any(g["name"] == group_name for g in self.groups_of(login))

    def _can_bless(self, login, group_name):
        """By the account's own bless right, or a group's bless grant."""
        if not login:
            return False
        if group_name in self.installation["accounts"][login].get("bless", []):
            return True
        mine = {group["name"] for group in self.groups_of(login)}
        return any(grant_type == 1 and grantor == group_name and member in mine
                   for member, grantor, grant_type in self.installation["group_grants"])

    def _user_object(self, account, caller, query):
        login = account["login"]
        user = {"id": account["id"], "real_name": account["real_name"], "name": login}
        if not caller:
            return user
        user.update(email=login, can_login=not account.get("disabled_text"))
        editusers = self._in(caller, "editusers")
        if editusers:
            user.update(email_enabled=account.get("email_enabled", True),
                        login_denied_text=account.get("disabled_text", ""))
        if "groups" not in ",".join(query.get("exclude_fields", [])):
            shown = [g for g in self.groups_of(login)
                     if caller == login or editusers or self._can_bless(caller, g["name"])]
            user["groups"] = [{"id": g["id"], "name": g["name"], "description": g["description"]}
                              for g in shown]
        return user

    def _users(self, query, caller):
        accounts = self.installation["accounts"]
        names, ids, matches = (query.get("names", []), query.get("ids", []),
                               query.get("match", []))
        if not (names or ids or matches):
            return error(400, 50, "The function User.get requires that you set one of the "
                                  "following parameters: ids, names, match")
        found = {}
        for name in names:
            account = self._account(name)
            if account is None:
                return error(404, 51, f"There is no user named '{name}'. Either you mis-typed "
                                      "the name or that user has not yet registered for a "
                                      "Bugzilla account.")
            found[account["id"]] = account
        if not caller and (ids or matches):
            return error(401, 505, "Logged-out users cannot use the \"ids\" or \"match\" "
                                   "argument to this function to access any user information.")
        by_id = {account["id"]: login for login, account in accounts.items()}
        for user_id in ids:
            if int(user_id) in by_id:
                found.setdefault(int(user_id), self._account(by_id[int(user_id)]))
        limit = int(self._all_parameters()["maxusermatches"])
        if query.get("limit", [""])[0]:
            given = int(query["limit"][0])
            limit = min(given, limit) if limit else given
        include_disabled = query.get("include_disabled", ["0"])[0] not in ("", "0")
        for text in matches:
            for account in self._match(text.strip(), limit, include_disabled):
                found.setdefault(account["id"], account)
        return 200, {"users": [self._user_object(account, caller, query)
                               for account in found.values()]}

    def _match(self, text, limit, include_disabled):
        """Bugzilla::User::match: wildcards, else an exact login, else a substring."""
        accounts = sorted((self._account(login) for login in self.installation["accounts"]),
                          key=lambda account: account["id"])
        if not text:
            return []
        if "*" in text:
            pattern = _like(text.replace("*", "%"))
            found = [a for a in accounts
                     if pattern.fullmatch(a["login"]) or pattern.fullmatch(a["real_name"])]
        else:
            found = [a for a in accounts if a["login"].lower() == text.lower()]
            if found:
                return found
            if len(text) < 3:
                return []
            found = [a for a in accounts
                     if text.lower() in a["login"].lower() or text.lower() in
                     a["real_name"].lower()]
        if not include_disabled:
            found = [a for a in found if not a.get("disabled_text")]
        return found[:limit] if limit else found

    def _groups(self, query, caller):
        if not caller:
            return error(401, 410, "You must log in before using this part of Bugzilla.")
        every = self._in(caller, "editusers") or self._in(caller, "creategroups")
        blessed = self.installation["accounts"][caller].get("bless", [])
        if not every and not blessed:
            return error(400, 805, "You are not allowed to view groups.")
        groups = [g for g in self.installation["groups"] if every or g["name"] in blessed]
        full = self._in(caller, "creategroups")
        answer = []
        for group in groups:
            item = {"id": group["id"], "name": group["name"], "description": group["description"]}
            if full:
                item.update(is_active=group["is_active"], is_bug_group=group["is_bug_group"],
                            user_regexp=group["user_regexp"])
            if query.get("membership", ["0"])[0] not in ("", "0"):
                item["membership"] = [
                    {"id": account["id"], "real_name": account["real_name"],
                     "name": login, "email": login,
                     "can_login": not account.get("disabled_text"),
                     "email_enabled": account.get("email_enabled", True),
                     "login_denied_text": account.get("disabled_text", "")}
                    for login, account in self.installation["accounts"].items()
                    if any(g["name"] == group["name"] for g in self.groups_of(login))]
            answer.append(item)
        return 200, {"groups": answer}

    def _all_parameters(self):
        return {**self.answers["/parameters"]["body"]["parameters"],
                **self.installation["admin_parameters"]}

    def _parameters(self, caller):
        if self._in(caller, "tweakparams"):
            return 200, {"parameters": self._all_parameters()}
        return 200, self.answers["/parameters"]["body"]

    # The web pages ---------------------------------------------------------------

    def _page(self, path, query, cookies):
        """(status, HTML, extra headers) of a page: editproducts.cgi's group
        controls and editgroups.cgi's group form behind the sign-in form,
        and index.cgi?logout=1."""
        one = {name: values[0] for name, values in query.items()}
        headers = []
        login = self._sessions.get((cookies.get("Bugzilla_login"),
                                    cookies.get("Bugzilla_logincookie")))
        if path == "index.cgi" and one.get("logout"):
            self._sessions.pop((cookies.get("Bugzilla_login"),
                                cookies.get("Bugzilla_logincookie")), None)
            if login:
                self.signed_out.append(login)
            return 200, _html("Logged Out", "<p>Your login has been forgotten.</p>"), [
                ("Set-Cookie", "Bugzilla_login=X; path=/; expires=Thu, 01-Jan-1970 00:00:00 GMT"),
                ("Set-Cookie", "Bugzilla_logincookie=X; path=/; "
                               "expires=Thu, 01-Jan-1970 00:00:00 GMT")]
        if path not in ("editproducts.cgi", "editgroups.cgi"):
            return 404, _html("Not Found", "<p>No such page.</p>"), []
        if login is None and "Bugzilla_login" in one:
            token, request_cookie = one.get("Bugzilla_login_token"), cookies.get(
                "Bugzilla_login_request_cookie")
            if not request_cookie or token != _login_token(request_cookie):
                return 200, _html("Untrusted Authentication Request",
                                  "<p>You tried to log in using an untrusted request.</p>"), []
            account = self._account(one["Bugzilla_login"])
            if account is None or self.installation["passwords"].get(
                    account["login"]) != one.get("Bugzilla_password"):
                return 200, _html("Invalid Username Or Password",
                                  "<p>The username or password you entered is not valid.</p>"), []
            cookie = secrets.token_hex(5)
            self._sessions[(str(account["id"]), cookie)] = login = account["login"]
            self.signed_in.append(login)
            headers += [("Set-Cookie", f"Bugzilla_login={account['id']}; path=/; httponly"),
                        ("Set-Cookie", f"Bugzilla_logincookie={cookie}; path=/; httponly")]
        if login is None:
            request_cookie = secrets.token_hex(5)
            hidden = "".join(f'<input type="hidden" name="{html.escape(name)}" '
                             f'value="{html.escape(value)}">'
                             for name, value in one.items() if not name.startswith("Bugzilla_"))
            form = (f'<form name="login" action="https://bugzilla.example.org/{path}"'
                    ' method="POST"><input id="Bugzilla_login" name="Bugzilla_login">'
                    '<input type="password" id="Bugzilla_password" name="Bugzilla_password">'
                    '<input type="checkbox" id="Bugzilla_restrictlogin" '
                    'name="Bugzilla_restrictlogin" checked="checked">' + hidden
                    + '<input type="hidden" name="Bugzilla_login_token" '
                    f'value="{_login_token(request_cookie)}">'
                    '<input type="submit" name="GoAheadAndLogIn" value="Log in"></form>')
            return 200, _html("Log in to Bugzilla", form), [
                ("Set-Cookie", f"Bugzilla_login_request_cookie={request_cookie}; path=/")]
        if path == "editgroups.cgi":
            return 200, self._group_page(login, one), headers
        if not self._in(login, "editcomponents"):
            return 200, _html("Authorization Required", "<p>Sorry, you aren't a member of the "
                                                        "'editcomponents' group.</p>"), headers
        product = one.get("product", "")
        controls = self.installation["group_controls"].get(product)
        if controls is None or one.get("action") != "editgroupcontrols":
            return 200, _html("Product Does Not Exist",
                              f"<p>There is no product named '{html.escape(product)}'.</p>"), \
                headers
        return 200, self._controls_page(product, controls), headers

    def _group_page(self, login, one):
        """editgroups.cgi?action=changeform&group=ID as 5.2 shows it."""
        if not self._in(login, "creategroups"):
            return _html("Authorization Required", "<p>Sorry, you aren't a member of the "
                                                   "'creategroups' group.</p>")
        by_id = {str(group["id"]): group for group in self.installation["groups"]}
        group = by_id.get(one.get("group", ""))
        if one.get("action") != "changeform" or group is None:
            return _html("Invalid group ID", "<p>The group you specified doesn't exist.</p>")
        grants = self.installation["group_grants"]
        lists = {"members": (0, False), "member_of": (0, True), "bless_from": (1, False),
                 "bless_to": (1, True)}
        if self._all_parameters().get("usevisibilitygroups") == "1":
            lists.update(visible_from=(2, False), visible_to_me=(2, True))
        pairs = []
        for name, (grant_type, reverse) in lists.items():
            if reverse:
                current = [grantor for member, grantor, kind in grants
                           if kind == grant_type and member == group["name"]]
            else:
                current = [member for member, grantor, kind in grants
                           if kind == grant_type and grantor == group["name"]]
            options = {"_add": [g for g in self.installation["groups"]
                                if g["name"] not in current],
                       "_remove": [g for g in self.installation["groups"]
                                   if g["name"] in current]}
            for suffix, items in options.items():
                rows = "".join(f'<option value="{g["id"]}">\n          '
                               f'{html.escape(g["name"])}</option>' for g in items)
                pairs.append(f'<td><label for="{name}{suffix}">Current</label><select '
                             f'multiple="multiple" size="10" name="{name}{suffix}" '
                             f'id="{name}{suffix}">{rows}</select></td>')
        body = ('<form method="post" action="editgroups.cgi">'
                '<input type="hidden" name="action" value="postchanges">'
                f'<input type="hidden" name="group_id" value="{group["id"]}">'
                f'<input type="text" name="name" value="{html.escape(group["name"])}">'
                '<table id="grant_table"><tr>' + "".join(pairs) + '</tr></table>'
                '<input type="submit" id="update-group" value="Update Group">'
                '<input type="hidden" name="token" value="1234-abcd"></form>')
        return _html(f"Change Group: {html.escape(group['name'])}", body)

    def _controls_page(self, product, controls):
        rows = []
        for group in sorted(self.installation["groups"], key=lambda g: g["name"]):
            if not group["is_bug_group"]:
                continue
            control = controls.get(group["name"], {})
            name = html.escape(group["name"])
            if not group["is_active"]:
                rows.append(f'<tr class="disabled"><td>{name}</td><td class="center" '
                            'colspan="7">Disabled</td><td>1</td></tr>')
                continue
            cells = [f"<td>{name}</td>", _box("entry", group["id"], control.get("entry"))]
            for kind in ("membercontrol", "othercontrol"):
                options = "".join(
                    f"<option value={value}{_SELECTED if control.get(kind, 0) == value else ''}"
                    f">{label}</option>"
                    for value, label in enumerate(("NA", "Shown", "Default", "Mandatory")))
                cells.append(f'<td><select name="{kind}_{group["id"]}">{options}</select></td>')
            for kind in ("canedit", "editcomponents", "canconfirm", "editbugs"):
                cells.append(_box(kind, group["id"], control.get(kind)))
            rows.append("<tr>" + "".join(cells) + "<td>0</td></tr>")
        body = ('<form method="post" action="editproducts.cgi">'
                '<input type="hidden" name="action" value="updategroupcontrols">'
                f'<input type="hidden" name="product" value="{html.escape(product)}">'
                '<input type="hidden" name="token" value="1234-abcd">'
                '<table id="admin_table"><tr class="column_header"><th>Group</th><th>Entry</th>'
                '<th>MemberControl</th><th>OtherControl</th><th>Canedit</th>'
                '<th>editcomponents</th><th>canconfirm</th><th>editbugs</th><th>Bugs</th></tr>'
                + "".join(rows) + '</table><input type=submit name="submit" value="submit">'
                '</form>')
        return _html(f"Edit Group Controls for {html.escape(product)}", body)


_SELECTED = " selected='selected'"


def _like(pattern):
    """SQL LIKE (MySQL's: case-insensitive, `\\` escapes) as a regular expression."""
    out, escaped = [], False
    for char in pattern:
        if escaped:
            out.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def _login_token(request_cookie):
    return f"1700000000-{request_cookie[::-1]}"


def _box(kind, group_id, checked):
    mark = " checked='checked'" if checked else ""
    return f"<td><input type=checkbox value=1 name={kind}_{group_id}{mark}></td>"


def _html(title, body):
    return (f"<!DOCTYPE html><html lang=\"en\"><head><title>{title}</title></head><body>"
            f"<div id=\"bugzilla-body\"><h1 id=\"title\">{title}</h1>{body}</div></body></html>")
