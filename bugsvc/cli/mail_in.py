"""`bugsvc mail-in`: one reply to a bug mail (an RFC 5322 message on
standard input, as an MTA's pipe gives it, like Bugzilla's email_in.pl)
becomes a comment, field changes and attachments on the bug its Reply-To
token names, made by the account the token was made for, with that
account's rights.

The exit status tells the MTA what became of the message, and the reason is
printed on standard error, which the MTA returns to the sender once (its
bounce): 0 taken, or left alone (an automatic message, which is never
answered, so no mail loop can start; or one already taken: the same
Message-ID); 65 (EX_DATAERR) nothing to add, an unknown `@field`; 67
(EX_NOUSER) no valid reply token among its recipients; 77 (EX_NOPERM) the
tracker refused it (the account may not see or change the bug, a value it
does not take). Nothing is stored for a refused message.
"""

import base64
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
    message = reply.read(data)
    if message.automatic:
        print("bugsvc mail-in: an automatic message (auto-reply, bounce or list mail); "
              "left alone.", file=err)
        return TAKEN
    db = prepare_database(config, err)
    try:
        return _take(unit_of_work(db, config), message, out, err)
    finally:
        db.close()


def _take(units, message, out, err):
    with units.db.transaction() as conn:
        address = settings.load(conn)["mailin_address"]
        target = None
        if address:
            target = next((found for found in (reply.token_of(conn, recipient, address)
                                               for recipient in message.recipients) if found),
                          None)
        duplicate = reply.taken(conn, message.message_id)
    if duplicate:
        print(f"bugsvc mail-in: {message.message_id} was taken before.", file=err)
        return TAKEN
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
        for name, content_type, content in message.files:
            _service("Bug.add_attachment", ctx, {
                "ids": [bug_id], "data": base64.b64encode(content).decode("ascii"),
                "file_name": name, "summary": name, "content_type": content_type})
        reply.take(ctx, message.message_id)
    try:
        units.run(work, write=True, caller=user_id, remote_ip="mail")
    except ServiceError as exc:
        return _refused(err, NO_PERMISSION, f"bug {bug_id} was not changed: {exc.message}")
    print(f"bugsvc mail-in: taken on bug {bug_id}.", file=out)
    return TAKEN


def _service(name, ctx, params):
    return OPERATIONS[name].service(ctx, params)


def _refused(err, status, reason):
    print(f"bugsvc mail-in: refused: {reason}.", file=err)
    return status
