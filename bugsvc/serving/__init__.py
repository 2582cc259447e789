"""Running the service: preparing the database and serving with waitress
(server.py), in one process or several (workers.py), the checks made before
anything is created (startup.py), and the requests waitress refuses itself
(server_errors.py)."""
