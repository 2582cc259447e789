"""Configuration of one service instance, built by the entry script."""

from dataclasses import dataclass, field

from .accounts.auth import ScryptCost
from .store.db import REPLICA_MAX_LAG as DEFAULT_REPLICA_MAX_LAG
from .store.location import Location


DEFAULT_ADMIN_EMAIL = "admin@example.com"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_DB = "bugsvc.sqlite"
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_THREADS = 8
DEFAULT_CONNECTION_LIMIT = 500
DEFAULT_CONNECTIONS_PER_ADDRESS = 64
DEFAULT_REQUESTS_PER_ADDRESS = 2


@dataclass
class Config:
    """Everything create_app needs; no I/O happens when one is made.

    database: where the database is, a Location (store/location.py): an
    SQLite file's path or a PostgreSQL URL, given as either and parsed once
    here into the engine that keeps it. admin_email / admin_password: the
    first administrator, created on an empty database. password_cost: scrypt
    work factors for new password hashes. workers: serving processes (see
    bugsvc/serving/workers.py). threads: waitress's request threads per
    process.
    """
    database: Location = DEFAULT_DB
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    admin_email: str | None = None
    admin_password: str | None = None
    password_cost: ScryptCost = field(default_factory=ScryptCost)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES   # larger request bodies: 413, unread
    workers: int = 1                 # server processes sharing the listening socket
    threads: int = DEFAULT_THREADS   # request threads of each process
    pin_cores: bool = True           # each serving process on one core (bugsvc/workers.py)
    # Connections each process holds, in all and per client address
    # (bugsvc/serving/connections.py; 0 per address: no such limit).
    connection_limit: int = DEFAULT_CONNECTION_LIMIT
    connections_per_address: int = DEFAULT_CONNECTIONS_PER_ADDRESS
    # Request threads of each process one client address may hold at once
    # (bugsvc/serving/dispatch.py; 0: no limit).
    requests_per_address: int = DEFAULT_REQUESTS_PER_ADDRESS
    # Proxies whose X-Forwarded-For is believed (bugsvc/web/client_address.py).
    trusted_proxies: tuple = ()
    # Delivery of bug mail and webhooks (bugsvc/notify/worker.py): threads of
    # each serving process (False: none, for set-ups running `bugsvc deliver`
    # apart), and seconds between attempts (empty: the worker's schedules).
    # Rate limits (bugsvc/api/limits.py; none by default): limits.Rule tuples
    # for callers with credentials and for anonymous ones.
    rate_limits: tuple = ()
    anonymous_rate_limits: tuple = ()
    # Metrics at /metrics (bugsvc/web/metrics.py): networks allowed to read
    # them, a bearer token that may, and the directory the serving processes
    # share their values in (set by serving/server.py for --workers > 1).
    metrics_allow: tuple = ()
    metrics_token: str | None = None
    metrics_dir: str | None = None
    deliver: bool = True
    delivery_threads: int = 2
    retry_delays: tuple = ()
    # Read replicas of a PostgreSQL database (store/postgres/replica.py):
    # their URLs, and how many seconds behind the primary one may be.
    replicas: tuple = ()
    replica_max_lag: float = DEFAULT_REPLICA_MAX_LAG

    def __post_init__(self):
        self.database = Location.of(self.database)
