"""The administrator every test database starts with (conftest.py installs
it; servers started by tests may choose their own password)."""

ADMIN = "admin@example.com"
ADMIN_PASSWORD = "admin-password"
