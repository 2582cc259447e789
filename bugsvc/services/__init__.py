"""The API methods, one module per area of the interface: each public
function is a service `f(ctx, params) -> dict` that an operation of
api/operations.py names. They see neither transports nor credentials."""
