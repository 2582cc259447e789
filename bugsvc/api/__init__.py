"""The call pipeline at the top of the interface: the table of operations
(operations.py, of operation.py's Operation), the Runner that runs one
(runner.py), JSON input (json_input.py), and what the documentation says of
each operation (docs.py, schemas.py). What a call works with below it (the
Context, parameter coercion, answer shapes, change notes) is the call
kernel's, in bugsvc/call/."""
