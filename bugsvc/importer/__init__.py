"""Moving in: importing a live Bugzilla (5.0 to 5.2, bugzilla.mozilla.org, or
another bugsvc) over its REST interface into a new bugsvc database, keeping
bug, comment, attachment, flag and flag type ids, and checking afterwards
that the target shows what the source shows.

client.py: HTTP with a bounded number of requests at once, retries with
growing delays (429 and Retry-After honoured), and bounds on what each
answer may cost. source.py: the calls the import reads, in pages and
batches. accounts.py: which accounts the source shows and their
memberships. admin_pages.py: group controls from Bugzilla 5.2's
administration pages. forms.py: the reference's answers in one form
(dates, booleans, field names, history shapes, See Also links).
catalogue.py, target.py and writer.py: writing into the target below the
domain code, so imported data raises no notification of any kind.
state.py: where a run stands, kept in the target database, so a stopped
import continues and a later one brings only what changed. run.py: one
run, start to end. verify.py: source and target compared on everything
the import carries. report.py, progress.py: what the operator sees.
"""
