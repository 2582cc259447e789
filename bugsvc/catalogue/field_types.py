"""The type codes of bug fields, as the interface numbers them (the `type`
of GET /rest/field/bug): custom fields are of types 1 to 10."""

UNKNOWN, FREETEXT, SINGLE_SELECT, MULTI_SELECT, TEXTAREA, DATETIME, BUG_ID, BUG_URLS, \
    KEYWORDS, DATE, INTEGER = range(11)
