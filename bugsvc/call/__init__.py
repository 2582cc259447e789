"""The call kernel: what every piece of work in bugsvc is done with, below
the domain that uses it. The Context a call works in (context.py), typed
access to a call's parameters (params.py), the shapes that
include_fields/exclude_fields trim (fields.py), the `changes` notes of an
update (changes.py), and the unit of work that opens a transaction and
makes its Context (unit_of_work.py).

It imports store/ and nothing of the domain, of services/ or of api/: what
the domain lends it (who a caller is, the instance parameters, the journal
of events) it is given where a unit of work is made (bugsvc/compose.py)."""
