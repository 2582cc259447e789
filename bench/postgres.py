"""A PostgreSQL cluster of its own for the load runs, holding a copy of a
seeded SQLite database.

    python -m bench.postgres start [--bugs 100000 | --db FILE] --folder DIR
    python -m bench.postgres replica --of DIR --folder DIR2
    python -m bench.postgres stop --folder DIR

`start` makes a cluster in DIR (initdb; a folder holding one already is
started again), its server on a free loopback port (and a socket in DIR),
copies the seeded SQLite database (seeded first when missing; moved to this
bugsvc's schema version first) into its database `bugs` with `bugsvc
convert-db`'s copy unless that database holds it already, and prints the
database's URL. The server runs on until `stop`, which stops it (by the
process id in its postmaster.pid, through pg_ctl) and removes DIR.
`bench.run --postgresql` does all three around one run. `replica` makes a
streaming replica of the cluster in `--of` (pg_basebackup -R) in DIR2,
starts it the same way and prints its database's URL, for `bench.run
--db-replica`; `stop` stops and removes it too.

The data comes from the same generator as SQLite's (bench.seed) and is
copied row by row, so both engines serve the very same bugs; the copy is
verified (row counts and checksums) before it is committed.

The server is set up as a production server on one machine would be, not as
the tests' throwaway one: durable (fsync on), with commits acknowledged
before their WAL reaches the disk (synchronous_commit off: a crash may lose
the last fraction of a second of commits but never corrupts; SQLite's
WAL mode with synchronous=NORMAL, which bugsvc uses, promises the same), a
shared buffer cache sized for the data, and no JIT compilation (which costs
short queries more than it saves). Debian's initdb and pg_ctl refuse to
run as root: as root they run as the `postgres` account.
"""

import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from bugsvc.store import convert
from bugsvc.store.location import open_database

from . import seed as seeding


DATABASE = "bugs"
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "max_connections": "200",
    "shared_buffers": "1GB",
    "effective_cache_size": "4GB",
    "work_mem": "16MB",
    "maintenance_work_mem": "512MB",
    "synchronous_commit": "off",
    "jit": "off",
    "max_wal_size": "4GB",
}
START_TIMEOUT = 120


class Unavailable(Exception):
    """PostgreSQL's server programs are not installed here."""


def server_programs():
    """The folder of initdb and pg_ctl: BUGSVC_TEST_PG_BIN, Debian's newest
    /usr/lib/postgresql/*/bin, or PATH. Errors: Unavailable."""
    candidates = [os.environ["BUGSVC_TEST_PG_BIN"]] if os.environ.get("BUGSVC_TEST_PG_BIN") \
        else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                         key=lambda path: int(Path(path).parent.name)
                         if Path(path).parent.name.isdigit() else 0, reverse=True)
    if shutil.which("initdb"):
        candidates.append(str(Path(shutil.which("initdb")).resolve().parent))
    for folder in candidates:
        if all(os.access(Path(folder) / name, os.X_OK) for name in ("initdb", "pg_ctl")):
            return Path(folder)
    raise Unavailable("PostgreSQL is not installed (Debian: apt-get install postgresql)")


class Cluster:
    """The cluster in `folder` (`start` makes it when missing)."""

    def __init__(self, folder):
        self.bin = server_programs()
        self.folder = Path(folder).resolve()
        self.data = self.folder / "data"
        self._as_postgres = os.geteuid() == 0
        port_file = self.folder / "port"
        self.port = int(port_file.read_text()) if port_file.exists() else None

    def start(self):
        """Make the cluster when missing and start its server unless it runs."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self._as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
        if not (self.data / "PG_VERSION").exists():
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
                      "-E", "UTF8", "--locale=C.UTF-8")
        if self.port is None:
            self.port = _free_port()
            (self.folder / "port").write_text(str(self.port))
        if not self.running():
            options = " ".join(f"-c {name}={value}" for name, value in SETTINGS.items())
            self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"),
                      "-w", "-t", str(START_TIMEOUT), "-o",
                      f"-p {self.port} -k {self.folder} {options}", "start")
        return self

    def _run(self, program, *args, check=True, timeout=START_TIMEOUT + 60):
        command = [str(self.bin / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--"] + command
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.folder,
                              timeout=timeout)
        if check and done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stdout}"
                               f"{done.stderr}")
        return done

    def start_replica_of(self, primary):
        """Make this folder's cluster a streaming replica of the running
        cluster `primary` (a base backup that follows it) and start it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self._as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
        if not (self.data / "PG_VERSION").exists():
            self._run("pg_basebackup", "-D", str(self.data), "-R", "-X", "stream", "-c", "fast",
                      "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
                      timeout=3600)
        return self.start()

    def running(self):
        return (self.data / "PG_VERSION").exists() and \
            self._run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0

    def pid(self):
        """The server's process id (the first line of postmaster.pid), or None."""
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def url(self, name=DATABASE):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def has_database(self, name=DATABASE):
        import psycopg
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                (name,)).fetchone() is not None

    def create_database(self, name=DATABASE):
        import psycopg
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")

    def settings(self):
        """{name: value} of the server's version and the settings that matter here."""
        import psycopg
        names = ["server_version"] + list(SETTINGS) + ["fsync"]
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            return {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in names
                    if name != "listen_addresses"}

    def stop(self, remove=True):
        """Stop the server (pg_ctl signals the process of postmaster.pid and
        waits for it) and remove the folder."""
        try:
            if self.running():
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            if remove:
                shutil.rmtree(self.folder, ignore_errors=True)


class LocalServer:
    """The processes of a PostgreSQL server running on this machine, for
    their CPU time: the postmaster (found as the parent of a connection's
    backend) and its children, running or ended."""

    def __init__(self, postmaster):
        self.postmaster = postmaster

    @classmethod
    def of(cls, url):
        """The server at `url` when it runs here (Linux /proc), else None."""
        import psycopg
        try:
            with psycopg.connect(str(url), autocommit=True) as conn:
                backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
                # While the connection is open: its backend ends with it.
                parent = int(_stat_fields(backend)[1])
            if b"postgres" not in Path(f"/proc/{parent}/cmdline").read_bytes():
                return None             # another machine's (or namespace's) process id
        except (psycopg.Error, OSError, ValueError, IndexError):
            return None
        return cls(parent)

    def cpu_seconds(self):
        """CPU time (user + system) of the server so far: the postmaster's,
        its running children's and that of the children that ended (which
        the postmaster waited for: connections closed meanwhile)."""
        ticks = 0
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                fields = _stat_fields(name)
            except OSError:
                continue                # ended meanwhile
            if int(name) == self.postmaster:
                ticks += sum(int(value) for value in fields[11:15])
            elif int(fields[1]) == self.postmaster:
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")


def _stat_fields(pid):
    """The fields of /proc/PID/stat after the command's name (state first)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def load(cluster, sqlite_path, out=sys.stderr):
    """The URL of the cluster's database `bugs`, holding a copy of the SQLite
    database at `sqlite_path` (copied when the database is new). Returns
    (url, seconds the copy took or None). Errors: RuntimeError for a
    database kept from earlier runs that left more than BACKLOG_LIMIT bug
    events unexpanded."""
    url = cluster.url()
    if cluster.has_database():
        waiting = events_waiting(url)
        if waiting > BACKLOG_LIMIT:
            raise RuntimeError(
                f"the database in {cluster.folder} holds {waiting:,} bug events that no "
                "delivery worker has expanded (left by runs without one): servers measured "
                "on it spend their first seconds on them, and their figures come out low; "
                "remove the folder for a fresh copy")
        return url, None
    source = open_database(str(sqlite_path))
    try:
        source.initialize()             # this bugsvc's schema version, as the copy needs
    finally:
        source.close()
    cluster.create_database()
    started = time.perf_counter()
    try:
        convert.convert(str(sqlite_path), url, convert.Progress(out), batch=5000)
    except BaseException:
        import psycopg
        with psycopg.connect(cluster.url("postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        raise
    seconds = time.perf_counter() - started
    import psycopg
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")          # fresh statistics, as autovacuum would make
    return url, seconds


# Bug events a kept cluster's database may hold unexpanded: the servers of a
# run expand their own comments' events as they go (none are left after
# one); thousands come from runs in a process of one's own, without a
# delivery worker, and cost the next run's servers 10-25% of their rate.
BACKLOG_LIMIT = 1000


def events_waiting(url):
    """How many bug events of the database at `url` wait to be expanded."""
    import psycopg
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT COUNT(*) FROM outbox_events"
                            " WHERE expanded_at IS NULL").fetchone()[0]


def sqlite_source(bugs, db, out=sys.stderr):
    """The seeded SQLite database to copy (seeded when missing)."""
    path = Path(db) if db else seeding.default_db_path(bugs)
    if not path.exists():
        print(f"Seeding {path} with {bugs:,} bugs ...", file=out)
        seeding.seed(path, bugs)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.postgres",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("start", "replica", "stop"))
    parser.add_argument("--folder", required=True, help="the cluster's folder")
    parser.add_argument("--bugs", type=int, default=100000,
                        help="copy bench/data/bugs-N.sqlite (default 100000)")
    parser.add_argument("--db", help="the SQLite database to copy instead")
    parser.add_argument("--of", help="replica: the folder of the cluster to follow")
    args = parser.parse_args(argv)
    try:
        cluster = Cluster(args.folder)
        if args.action == "stop":
            if not cluster.folder.exists():
                print(f"bench.postgres: no cluster in {args.folder}", file=sys.stderr)
                return 1
            cluster.stop()
            return 0
        if args.action == "replica":
            if not args.of:
                print("bench.postgres: replica needs --of DIR", file=sys.stderr)
                return 1
            print(cluster.start_replica_of(Cluster(args.of)).url())
            return 0
        url, seconds = load(cluster.start(), sqlite_source(args.bugs, args.db))
    except (Unavailable, RuntimeError, convert.ConvertError) as exc:
        print(f"bench.postgres: {exc}", file=sys.stderr)
        return 1
    if seconds is not None:
        print(f"Copied in {seconds:.0f}s", file=sys.stderr)
    print(url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
