"""The bug domain: which bugs and private parts the caller may see
(visibility.py), looking bugs up as the caller may (lookup.py), reading them
(view.py, history.py), filing and changing them (create.py, update.py,
record.py, store.py, values.py, status.py, ...), comments and comment tags
(comments.py), attachments (attachments.py, attachment_flags.py), flags,
dependencies, groups, personal tags (tags.py), last visits (last_visit.py),
saved searches (saved_search.py) and search (search.py, search_sql.py,
quicksearch.py)."""
