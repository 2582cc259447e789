"""The API methods, one module per area of the interface: each public
function is a service `f(ctx, params) -> dict` that an operation of
api/operations.py names. They see neither transports nor credentials.

A service is a thin adapter: its docstring (params, return keys, error
codes), the checks of the call as a whole (login, the group the method
needs, required and unknown parameters), its parameters read through
call/params.py, a call into the area package that holds the behaviour and
its SQL (accounts/, catalogue/, bugs/, notify/), and the answer's shape.
A parameter whose use depends on a setting or on stored data is handed
over as given and read there. No service touches the database
(tests/project/test_layers.py checks it).
"""
