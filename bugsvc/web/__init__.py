"""The ways in over HTTP: REST (rest/), XML-RPC and JSON-RPC (rpc/), the
landing page (landing.py), and what they share (http.py: reading requests,
writing JSON, entity tags, logging; client_address.py)."""
