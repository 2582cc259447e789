"""The call pipeline below every way in: the table of operations
(operations.py, of operation.py's Operation), the Runner that runs one
(runner.py), the Context a service receives (context.py), include/exclude
fields (fields.py), parameter coercion (params.py), JSON input
(json_input.py), the `changes` answer (changes.py), and what the
documentation says of each operation (docs.py, schemas.py)."""
