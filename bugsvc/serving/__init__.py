"""Running the service: preparing the database and serving with waitress
(server.py), in one process or several (workers.py), the checks made before
anything is created (startup.py), the requests waitress refuses itself
(server_errors.py), what a connection may hold (connections.py) and the
request threads shared between client addresses (dispatch.py)."""
