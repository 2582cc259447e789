"""bugsvc: a bug tracker with a Bugzilla 5.x compatible REST interface."""

__version__ = "0.1.0"

# The compatibility level answered by GET /rest/version: clients choose
# features by it.
COMPATIBLE_VERSION = "5.2"
