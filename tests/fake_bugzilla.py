"""A Bugzilla 5.2 on loopback that answers from recorded answers
(tests/data/bugzilla-5.2/answers.json, whose `_about` says where they come
from), for the calls an import makes.

Batches are composed as Bugzilla 5.2's REST layer does: the id in the path
and the `ids` of the query are one list (path first), the answer is the
union of each bug's, and one bug the caller may not see fails the whole
call with error 102 (HTTP 401). Search lists bugs by `bug_id` greater than
`v1`, as the importer pages them.
"""

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ANSWERS = Path(__file__).resolve().parent / "data" / "bugzilla-5.2" / "answers.json"
DENIED = (401, 102, "You are not authorized to access bug #{}.")


def load():
    return json.loads(ANSWERS.read_text(encoding="utf-8"))


class FakeBugzilla:
    """start() it, use .url, stop() it; .requests counts the calls."""

    def __init__(self, answers=None):
        self.answers = answers or load()
        self.requests = 0
        self.paths = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_GET(self):
                parsed = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
                fake.requests += 1
                fake.paths.append(parsed.path)
                status, body = fake.answer(parsed.path.removeprefix("/rest"), query)
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

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

    # Answers -------------------------------------------------------------------

    def answer(self, path, query):
        a = self.answers
        fixed = a.get(path if path != "/product" else f"/product?ids={','.join(query['ids'])}")
        if fixed is not None:
            return fixed.get("status", 200), fixed["body"]
        parts = path.strip("/").split("/")
        if parts == ["user"]:
            return self._users(query.get("names", []))
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
                    return status, {"error": True, "code": code,
                                    "message": message.format(bug_id),
                                    "documentation": "https://bugzilla.readthedocs.org/"}
            kind = parts[2] if len(parts) == 3 else "bug"
            if kind == "bug":
                return 200, {"bugs": [a["bugs"][i] for i in ids], "faults": []}
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
        return 404, {"error": True, "code": 32614, "message":
                     f"A REST API resource was not found for 'GET {path}'."}

    def _users(self, names):
        users = self.answers["users"]
        for name in names:
            if name not in users:
                return 400, {"error": True, "code": 51,
                             "message": f"There is no user named '{name}'."}
        return 200, {"users": [users[name] for name in names]}

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
