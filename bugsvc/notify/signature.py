"""Signing webhook calls as the Standard Webhooks specification says.

Each call carries `webhook-id` (the message's id: the same on every retry,
so a receiver can drop a call it already handled), `webhook-timestamp`
(seconds since the epoch, when the call is made) and `webhook-signature`:
`v1,` and the base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" under the
webhook's secret, one such signature per valid secret, separated by spaces
(two while a secret is being replaced). A secret is `whsec_` and the base64
of 32 random bytes; the HMAC key is those bytes.
"""

import base64
import hashlib
import hmac
import secrets


PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret():
    """A new signing secret, in the specification's form."""
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret):
    return base64.b64decode(secret.removeprefix(PREFIX))


def sign(secret, message_id, timestamp, body):
    """The `v1,<signature>` of one call (body: the bytes sent)."""
    content = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(secrets_in_use, message_id, timestamp, body):
    """The three headers of a call signed with each of `secrets_in_use`."""
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": " ".join(sign(secret, message_id, timestamp, body)
                                          for secret in secrets_in_use)}
