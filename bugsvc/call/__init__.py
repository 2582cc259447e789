"""The call kernel: what every piece of work in bugsvc is done with, below
the domain that uses it. The Context a call works in (context.py), typed
access to a call's parameters (params.py), the shapes that
include_fields/exclude_fields trim (fields.py) and the `changes` notes of
an update (changes.py)."""
