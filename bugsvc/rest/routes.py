"""The REST route table: one line per call of the interface.

Order matters only where two templates match the same path: the first
route with the request's verb wins, so specific templates come first.
"""

from .routing import Route, EXEMPT, REQUIRED, SELF, id_or_name, id_list, scalars

ROUTES = [
    # Instance information
    Route("GET", "/version", "instance.version", login=EXEMPT),
    Route("GET", "/extensions", "instance.extensions", login=EXEMPT),
    Route("GET", "/timezone", "instance.timezone", login=EXEMPT),
    Route("GET", "/time", "instance.time", login=EXEMPT),
    Route("GET", "/parameters", "instance.parameters", login=EXEMPT),
    Route("PUT", "/parameters", "instance.update_parameters", login=REQUIRED),
    Route("GET", "/last_audit_time", "instance.last_audit_time", login=EXEMPT),
]
