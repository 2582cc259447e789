"""The MCP endpoint at /mcp (a bugsvc extension: Model Context Protocol for
AI assistants), over MCP's Streamable HTTP transport: JSON-RPC 2.0 messages
POSTed to one address, each request answered with one JSON body.

Written here rather than with the official SDK's server, whose transport is
an ASGI application on an event loop: this server is WSGI on waitress's
threads, and the part of the protocol it needs (tools, no server-initiated
messages, no sessions) is small. It speaks both eras of the protocol that
the SDK's client speaks: the `initialize` handshake (2025-03-26 to
2025-11-25) and the stateless per-request envelope of 2026-07-28, which the
client finds with `server/discover`.

Every tool runs operations of the table through the Runner as the caller
named by the API key (X-BUGZILLA-API-KEY or Authorization: Bearer), or
anonymously: the same rules, visibility and rate limits as REST.
"""

from .transport import McpResource


__all__ = ["McpResource"]
