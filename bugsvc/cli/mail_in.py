"""`bugsvc mail-in`: one reply to a bug mail (an RFC 5322 message on
standard input, as an MTA's pipe gives it, like Bugzilla's email_in.pl)
becomes a comment, field changes and attachments on the bug its Reply-To
token names, made by the account the token was made for, with that
account's rights. Mail to `mailin_new_bug_address` files a new bug (its
`@product` and `@component` lines say where; the subject is its summary, the
text its description) as the account whose address is the sender's.

The exit status tells the MTA what became of the message, and the reason is
printed on standard error, which the MTA returns to the sender once (its
bounce): 0 taken, or left alone (an automatic message, which is never
answered, so no mail loop can start; or one already taken: the same
Message-ID); 65 (EX_DATAERR) nothing to add, an unknown `@field`; 67
(EX_NOUSER) no valid reply token among its recipients (or, for a new
bug, a sender with no account); 77 (EX_NOPERM) the
tracker refused it (the account may not see or change the bug, a value it
does not take). Nothing is stored for a refused message.
"""

import base64
import re
import sys

from ..api.operations import OPERATIONS
from ..catalogue import settings
from ..compose import unit_of_work
from ..errors import ServiceError
from ..notify import reply
from ..serving import startup
from ..serving.server import prepare_database


TAKEN, DATA_ERROR, NO_USER, NO_PERMISSION = 0, 65, 67, 77
# The `@field value` lines a reply may hold: Bug.update's parameters.
FIELDS = ("status", "resolution", "dupe_of", "assigned_to", "priority", "severity", "summary",
          "whiteboard", "target_milestone", "version", "component", "product", "url",
          "op_sys", "platform")
_ALIASES = {"bug_status": "status", "assignee": "assigned_to", "bug_severity": "severity",
            "rep_platform": "platform", "status_whiteboard": "whiteboard"}


def mail_in(config, stdin=None, out=sys.stdout, err=sys.stderr):
    """Take one message from `stdin` (a binary stream). Returns the exit
    status (see the module). Errors: StartError when there is no database."""
    stdin = stdin or sys.stdin.buffer
    startup.check_database(config.database, must_exist=True)
    data = stdin.read(config.max_body_bytes + 1)
    if len(data) > config.max_body_bytes:
        return _refused(err, DATA_ERROR, f"the message is larger than {config.max_body_bytes} "
                                         "bytes")
    db = prepare_database(config, err)
    try:
        return take(unit_of_work(db, config), data, (), out, err)
    finally:
        db.close()


def take(units, data, envelope_recipients, out, err):
    """Take one message (bytes) whose envelope named `envelope_recipients`
    besides its headers' recipients. Returns the exit status (see the module)."""
    message = reply.read(data)
    if message.automatic:
        print("bugsvc mail-in: an automatic message (auto-reply, bounce or list mail); "
              "left alone.", file=err)
        return TAKEN
    message.recipients = list(envelope_recipients) + message.recipients
    return _take(units, message, out, err)


def _take(units, message, out, err):
    with units.db.transaction() as conn:
        parameters = settings.load(conn)
        address = parameters["mailin_address"]
        target = None
        if address:
            target = next((found for found in (reply.token_of(conn, recipient, address)
                                               for recipient in message.recipients) if found),
                          None)
        new_bug = parameters["mailin_new_bug_address"].lower()
        reporter = None
        if target is None and new_bug and new_bug in (r.lower() for r in message.recipients):
            reporter = reply.account_of_sender(conn, message.sender,
                                               parameters["emailsuffix"])
        duplicate = reply.taken(conn, message.message_id)
    if duplicate:
        print(f"bugsvc mail-in: {message.message_id} was taken before.", file=err)
        return TAKEN
    if target is None and new_bug and new_bug in (r.lower() for r in message.recipients):
        if reporter is None:
            return _refused(err, NO_USER, f"{message.sender} is not the address of an "
                                          "account of this tracker")
        return _file(units, message, reporter, out, err)
    if target is None:
        return _refused(err, NO_USER, "this message is not a reply to a bug mail of this "
                                      "tracker (no valid reply address among its recipients)")
    changes = {}
    for name, value in message.fields.items():
        name = _ALIASES.get(name, name)
        if name not in FIELDS:
            return _refused(err, DATA_ERROR, f"@{name} is not a field a reply may change "
                                             f"(it may change {', '.join(FIELDS)})")
        changes[name] = value
    if not (message.text or changes or message.files):
        return _refused(err, DATA_ERROR, "the reply has no text of its own (quoted text and "
                                         "signatures are left out)")
    bug_id, user_id = target

    def work(ctx):
        if reply.taken(ctx.conn, message.message_id):
            return
        if changes:
            params = dict(changes, ids=[bug_id])
            if message.text:
                params["comment"] = {"body": message.text}
            _service("Bug.update", ctx, params)
        elif message.text:
            _service("Bug.add_comment", ctx, {"id": bug_id, "comment": message.text})
        _attach(ctx, bug_id, message.files)
        reply.take(ctx, message.message_id)
    try:
        units.run(work, write=True, caller=user_id, remote_ip="mail")
    except ServiceError as exc:
        return _refused(err, NO_PERMISSION, f"bug {bug_id} was not changed: {exc.message}")
    print(f"bugsvc mail-in: taken on bug {bug_id}.", file=out)
    return TAKEN


_NEW_BUG_FIELDS = ("product", "component", "version", "severity", "priority", "platform",
                   "op_sys", "assigned_to", "target_milestone", "url", "whiteboard")
_SUBJECT_PREFIX = re.compile(r"^(?:(?:re|fwd?|aw|wg)\s*:\s*)+", re.IGNORECASE)


def _file(units, message, reporter, out, err):
    """File a new bug from `message` as account `reporter`."""
    params = {}
    for name, value in message.fields.items():
        name = _ALIASES.get(name, name)
        if name not in _NEW_BUG_FIELDS:
            return _refused(err, DATA_ERROR, f"@{name} is not a field a new bug by mail may "
                                             f"set (it may set {', '.join(_NEW_BUG_FIELDS)})")
        params[name] = value
    params["summary"] = _SUBJECT_PREFIX.sub("", message.subject).strip()
    params["description"] = message.text

    def work(ctx):
        if reply.taken(ctx.conn, message.message_id):
            return None
        bug_id = _service("Bug.create", ctx, params)["id"]
        _attach(ctx, bug_id, message.files)
        reply.take(ctx, message.message_id)
        return bug_id
    try:
        bug_id = units.run(work, write=True, caller=reporter, remote_ip="mail")
    except ServiceError as exc:
        return _refused(err, NO_PERMISSION, f"no bug was filed: {exc.message}")
    if bug_id is not None:
        print(f"bugsvc mail-in: filed bug {bug_id}.", file=out)
    return TAKEN


def _attach(ctx, bug_id, files):
    for name, content_type, content in files:
        _service("Bug.add_attachment", ctx, {
            "ids": [bug_id], "data": base64.b64encode(content).decode("ascii"),
            "file_name": name, "summary": name, "content_type": content_type})


def _service(name, ctx, params):
    return OPERATIONS[name].service(ctx, params)


def _refused(err, status, reason):
    print(f"bugsvc mail-in: refused: {reason}.", file=err)
    return status
