"""A throwaway PostgreSQL cluster for the tests: initdb into a temporary
folder, the server on its own port on loopback (and a socket in that
folder), stopped and removed at the end of the session. Debian's
`postgresql` package puts initdb and pg_ctl under
/usr/lib/postgresql/<version>/bin; they refuse to run as root, so as root
they run as the `postgres` account (which then owns the folder).

Every test that asks gets the installed schema and default data (or a
world built from them, tests/conftest.py): one work database per template,
copied once from the template database (CREATE DATABASE ... TEMPLATE), is
put back to the template's rows before each test by one function call
inside it (every table a test changed emptied and refilled from a snapshot,
the id sequences reset), which is several times faster than a new database
per test and keeps the server's caches warm. A test that needs a database of
its own (an empty one, or one it may break) gets a new one, dropped
afterwards.

A session killed before its end (SIGKILL, a CI job cancelled) cannot stop
its cluster; each cluster's folder names the test process that owns it, and
the next session stops and removes the clusters whose owner is gone.
"""

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path


# The cluster trades durability for speed: it is thrown away anyway.
_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off",
             "max_connections=300", "shared_buffers=64MB", "listen_addresses=127.0.0.1")


class Unavailable(Exception):
    """PostgreSQL's server programs are not installed here."""


def server_programs():
    """The folder holding initdb and pg_ctl (the newest version installed),
    from BUGSVC_TEST_PG_BIN, Debian's /usr/lib/postgresql/*/bin, or PATH.
    Errors: Unavailable."""
    candidates = []
    if os.environ.get("BUGSVC_TEST_PG_BIN"):
        candidates.append(os.environ["BUGSVC_TEST_PG_BIN"])
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                         key=lambda path: int(Path(path).parent.name)
                         if Path(path).parent.name.isdigit() else 0, reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).resolve().parent))
    for folder in candidates:
        if all(os.access(Path(folder) / name, os.X_OK) for name in ("initdb", "pg_ctl")):
            return Path(folder)
    raise Unavailable("PostgreSQL is not installed (no initdb and pg_ctl under "
                      "/usr/lib/postgresql/*/bin or on PATH; Debian: apt-get install postgresql)")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_PREFIX = "bugsvc-pg-"
_OWNER = "owner.pid"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_abandoned(bin_folder):
    """Stop and remove the clusters of test sessions that were killed: the
    folders whose owner process is gone. Returns how many were removed."""
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(_PREFIX + "*"):
        try:
            owner = int((folder / _OWNER).read_text())
        except (OSError, ValueError):
            continue                  # being made, or not one of ours
        if _alive(owner):
            continue
        if (folder / "data" / "postmaster.pid").exists():
            command = [str(bin_folder / "pg_ctl"), "-D", str(folder / "data"), "-m",
                       "immediate", "-w", "stop"]
            if os.geteuid() == 0:
                command = ["runuser", "-u", "postgres", "--"] + command
            subprocess.run(command, capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


class Cluster:
    """A running throwaway cluster; `url(name)` names one of its databases."""

    def __init__(self):
        self.bin = server_programs()
        self._names = itertools.count(1)
        self._lock = threading.Lock()
        self._work = {}               # template database -> its work database
        self._restorers = {}          # work database -> the session restoring it
        self._make_and_start(lambda: self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C.UTF-8", "--no-sync"), _SETTINGS)

    def _make_and_start(self, make_data, settings):
        """Make a folder of this session's (removed with its cluster if the
        session dies), call `make_data` to fill its data folder, and start
        the server there on a free loopback port with `settings`. On an
        error the folder is removed and the error raised."""
        remove_abandoned(self.bin)
        self.folder = Path(tempfile.mkdtemp(prefix=_PREFIX))
        self.data = self.folder / "data"
        self.port = None
        self._as_postgres = os.geteuid() == 0
        (self.folder / _OWNER).write_text(str(os.getpid()))
        if self._as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
        try:
            make_data()
            options = " ".join(f"-c {setting}" for setting in settings)
            # A free port can be taken by another process (a parallel test
            # worker's cluster or server) before the server binds it: then
            # another one is tried.
            for attempt in range(5):
                self.port = _free_port()
                try:
                    self._run("pg_ctl", "-D", str(self.data), "-l",
                              str(self.folder / "server.log"), "-w", "-t", "60", "-o",
                              f"-p {self.port} -k {self.folder} {options}", "start")
                    break
                except RuntimeError:
                    if attempt == 4 or "already in use" not in self.log():
                        raise
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def _run(self, program, *args):
        command = [str(self.bin / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--"] + command
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              cwd=self.folder)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}):\n{done.stdout}"
                               f"\n{done.stderr}\n{self.log()}")
        return done

    def log(self):
        path = self.folder / "server.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def url(self, name):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def admin(self, sql, *args):
        """Run `sql` in the cluster's `postgres` database, outside a transaction."""
        import psycopg
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(sql, args or None)

    def create_database(self, template=None):
        """A new empty database (or a copy of `template`); returns its name."""
        with self._lock:
            name = f"bugsvc_test_{next(self._names)}"
        self.admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
        return name

    def drop_database(self, name):
        self._close_restorer(name)
        self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def work_database(self, template):
        """The URL of `template`'s work database, holding exactly what
        `template` holds (see the module's docstring; each template has a
        work database of its own).

        The restore runs through one session per work database, kept open
        between tests: a new session would plan every statement of
        restore() anew (its plans live in the session), several times the
        cost of the restore itself. A session gone (a test that ended every
        session) is opened again."""
        import psycopg
        name = self._work.get(template)
        if name is not None:
            try:
                conn = self._restorers.get(name)
                if conn is None or conn.closed:
                    conn = self._open_restorer(name)
                try:
                    restored = self._restore(conn)
                except psycopg.OperationalError:
                    conn.close()     # ended by a test: once more with a new session
                    restored = self._restore(self._open_restorer(name))
                if restored:
                    return self.url(name)
            except psycopg.Error:
                pass
            self._close_restorer(name)
            self.drop_database(name)
        name = self._work[template] = self.create_database(template)
        with psycopg.connect(self.url(name), autocommit=True) as conn:
            _snapshot(conn)
        return self.url(name)

    def _open_restorer(self, name):
        """A new session restoring work database `name`, kept for the next
        restores."""
        import psycopg
        conn = self._restorers[name] = psycopg.connect(self.url(name), autocommit=True)
        conn.execute("SET lock_timeout = '5s'")
        return conn

    @staticmethod
    def _restore(conn):
        """End what a test left at work (idle sessions of pools stay) and
        put the template's rows back; true when the database then has no
        other table."""
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                     " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                     " AND state <> 'idle'")
        return conn.execute("SELECT bugsvc_snapshot.restore()").fetchone()[0]

    def _close_restorer(self, name):
        conn = self._restorers.pop(name, None)
        if conn is not None:
            conn.close()

    def stop(self):
        for name in list(self._restorers):
            self._close_restorer(name)
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def _snapshot(conn):
    """Keep a copy of every table of `conn`'s database in the schema
    bugsvc_snapshot, with the function bugsvc_snapshot.restore() that puts
    them back (true when the database then has no other table).

    restore() puts back only the tables changed since it last ran: those
    whose number of rows differs from the copy's, or holding a row written
    by a later transaction than its own (an insert or update, committed;
    a delete changes the count, or leaves a newer row when others replaced
    what it removed). The sequences are always set back."""
    tables = [row[0] for row in conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")]
    conn.execute("CREATE SCHEMA bugsvc_snapshot")
    # The transaction id (its low 32 bits, what a row's xmin holds) of the
    # last restore; a throwaway cluster never wraps around.
    conn.execute("CREATE TABLE bugsvc_snapshot.restored (xid bigint NOT NULL)")
    body = ["PERFORM set_config('session_replication_role', 'replica', true);",
            "DROP SCHEMA IF EXISTS recorder CASCADE;",
            "SELECT xid INTO last FROM bugsvc_snapshot.restored;"]
    for table in tables:
        conn.execute(f"CREATE TABLE bugsvc_snapshot.{table} AS TABLE public.{table}")
        rows = conn.execute(f"SELECT COUNT(*) FROM bugsvc_snapshot.{table}").fetchone()[0]
        body.append(f"IF (SELECT COUNT(*) FROM public.{table}) <> {rows} OR EXISTS (SELECT 1"
                    f" FROM public.{table} WHERE CAST(CAST(xmin AS TEXT) AS BIGINT) > last)"
                    f" THEN DELETE FROM public.{table};"
                    f" INSERT INTO public.{table} SELECT * FROM bugsvc_snapshot.{table};"
                    f" END IF;")
    sequences = conn.execute(
        "SELECT pg_get_serial_sequence('public.' || c.table_name, c.column_name)"
        " FROM information_schema.columns c WHERE c.table_schema = 'public'"
        " AND c.is_identity = 'YES'").fetchall()
    for (sequence,) in sequences:
        value, called = conn.execute(f"SELECT last_value, is_called FROM {sequence}").fetchone()
        body.append(f"PERFORM setval('{sequence}', {value}, {'true' if called else 'false'});")
    current = "CAST(CAST(pg_current_xact_id() AS TEXT) AS BIGINT) % 4294967296"
    body.append(f"UPDATE bugsvc_snapshot.restored SET xid = {current};")
    body.append(f"RETURN (SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public') = "
                f"{len(tables)};")
    conn.execute(f"INSERT INTO bugsvc_snapshot.restored (xid) VALUES ({current})")
    conn.execute("CREATE FUNCTION bugsvc_snapshot.restore() RETURNS boolean LANGUAGE plpgsql"
                 " AS $$ DECLARE last bigint; BEGIN " + " ".join(body) + " END $$")


class Replica(Cluster):
    """A streaming replica of the running cluster `primary`: a base backup
    of it (pg_basebackup -R, which writes the settings to follow the
    primary) started as a hot standby on its own port on loopback; stop()
    stops it and removes its folder. Every database of the primary, made
    before or after, is there as it replays."""

    def __init__(self, primary):
        self.bin = primary.bin
        self.primary = primary
        self._make_and_start(lambda: self._run(
            "pg_basebackup", "-D", str(self.data), "-R", "-X", "stream", "-c", "fast",
            "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"),
            _SETTINGS + ("hot_standby=on",))

    def _position(self, url, sql):
        import psycopg
        with psycopg.connect(url, autocommit=True) as conn:
            return conn.execute(sql).fetchone()[0]

    def catch_up(self, timeout=60, received=False):
        """Wait until the replica has replayed (with `received`: received)
        everything the primary has written now (replay must not be paused
        unless `received`). The cluster commits without waiting for the
        disk and a replica gets only what is on disk, so small commits that
        wait for it are made meanwhile (each puts everything before it there)."""
        import time
        target = self._position(self.primary.url("postgres"),
                                "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
        deadline = time.monotonic() + timeout
        kind = "receive" if received else "replay"
        while self._position(self.url("postgres"),
                             f"SELECT pg_last_wal_{kind}_lsn() - '0/0'::pg_lsn") < target:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replica did not catch up in {timeout} s:\n{self.log()}")
            self._commit_on_primary()

    def _commit_on_primary(self):
        import psycopg
        with psycopg.connect(self.primary.url("postgres"), autocommit=True) as conn:
            conn.execute("SET synchronous_commit = on")
            conn.execute("SELECT pg_current_xact_id()")

    def pause(self, timeout=60):
        """Stop replaying the primary's changes (reads see what was replayed).
        A pause asked for takes hold when the next change arrives, so small
        transactions are made on the primary until the replica says it is
        paused."""
        import time
        self.admin("SELECT pg_wal_replay_pause()")
        deadline = time.monotonic() + timeout
        while self._position(self.url("postgres"),
                             "SELECT pg_get_wal_replay_pause_state()") != "paused":
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replica did not pause in {timeout} s:\n{self.log()}")
            self._commit_on_primary()

    def resume(self):
        self.admin("SELECT pg_wal_replay_resume()")

    def stop(self):
        """Stop the replica (a fast shutdown: its sessions end) and remove
        its folder; once stopped, nothing more is done."""
        if not self.folder.exists():
            return
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
