"""REST at /rest and /rest.cgi: the route table (routes.py, matched by
routing.py), the one resource that serves it (adapter.py), answers as JSON,
JSONP or a page (render.py), and the OpenAPI description with its docs page
(openapi.py, docs.html)."""
