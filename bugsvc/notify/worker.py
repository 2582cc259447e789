"""The delivery worker: turns outbox events into messages, and delivers each
message once, with retries.

It runs as threads of each server process (unless the server is started
with `--deliver no`) and as the `bugsvc deliver` command, as many at once
as wanted: every step takes its work with a lease (store/outbox.py), so
each message is sent by one worker. A message is marked sent right after
the mail server or the webhook's receiver accepted it; a worker that dies
in between leaves its lease to run out, and the message is sent again
after LEASE (with the same Message-ID or webhook-id, by which receivers
recognise it).

A failed attempt is tried again after a delay that grows with each attempt
(with a random part, so many failures do not come back all at once); after
the last delay the message is parked: an administrator sees it (and why)
and can send it again (services/notification.py). A webhook whose call is
parked, or whose receiver answers 410 Gone, is disabled and its owner told
by mail. Sent and dropped messages are forgotten after KEEP.
"""

import logging
import os
import random
import socket
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import orjson

from ..bugs import series, whine
from ..catalogue import settings
from ..store import outbox
from . import (
    account_mail,
    addresses,
    bugmail,
    flagmail,
    mailer,
    recipients,
    signature,
    webhook_http,
    webhook_payload,
    whinemail,
)
from .message import Drop, envelope_sender


log = logging.getLogger("bugsvc.delivery")

# Delays (seconds) before the second, third ... attempt; after the last one
# fails the message is parked. Mail: about a day; webhooks: about three days
# (the schedule the Standard Webhooks specification suggests).
MAIL_RETRY_DELAYS = (60, 300, 900, 3600, 4 * 3600, 12 * 3600)
WEBHOOK_RETRY_DELAYS = (5, 300, 1800, 7200, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600,
                        24 * 3600)
JITTER = 0.25                 # each delay is drawn from delay * (1 +/- JITTER)
LEASE = timedelta(seconds=120)
KEEP = timedelta(days=7)
PURGE_EVERY = timedelta(hours=1)
# How often each process looks for scheduled searches whose time has come.
WHINE_EVERY = timedelta(seconds=30)
EXPAND_BATCH = 200
# Comments added to the comment text index in one transaction, where the
# index trails the comments (SQLite, schema.sql): a full batch holds the
# write lock for about 20 ms.
INDEX_BATCH = 500
MAIL_BATCH = 50
POLL_SECONDS = 1.0
# After a round that found work, the next one waits this long (unless it
# would start with full batches), so that the events of calls made
# meanwhile are expanded together: a round's fixed cost (its transactions,
# the due checks) is then paid once for many events instead of once or twice
# for each call, in the same process as the calls.
GATHER_SECONDS = 0.05


class Deliverer:
    """Delivers the outbox of one database.

    units: the UnitOfWork (call/unit_of_work.py) that messages are made and
    rendered in, of the Database and the Config (whose retry_delays, when
    set, replace both schedules). clock: the current aware UTC time (tests).
    """

    def __init__(self, units, clock=None):
        self.units = units
        self.db = units.db
        self.config = config = units.config
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        delays = tuple(getattr(config, "retry_delays", None) or ())
        self.mail_delays = delays or MAIL_RETRY_DELAYS
        self.webhook_delays = delays or WEBHOOK_RETRY_DELAYS
        self.lease = LEASE
        self.poll_seconds = POLL_SECONDS
        self.gather_seconds = GATHER_SECONDS
        self.webhook_timeout = webhook_http.TIMEOUT
        self._wake = threading.Event()
        self._local = threading.local()
        self._purged_at = None
        self._series_day = None
        self._series_lock = threading.Lock()
        self._whined_at = None
        self._whine_lock = threading.Lock()
        self.whine_every = WHINE_EVERY
        self._random = random.Random()
        # Told each outcome of a message (channel, and sent, dropped, retry
        # or parked), for metrics; None: nobody listens.
        self.on_outcome = None

    # Running --------------------------------------------------------------------------

    def wake(self):
        """Start the next round at once (a call of this process wrote events)."""
        self._wake.set()

    def owner(self):
        """This thread's lease owner: host, process, thread and a random part."""
        name = getattr(self._local, "owner", None)
        if name is None:
            name = self._local.owner = (f"{socket.gethostname()}:{os.getpid()}:"
                                        f"{threading.get_ident()}:{uuid.uuid4().hex[:8]}")
        return name

    def run_once(self):
        """One round: expand waiting events, index new comments, send due
        mail, call due webhooks, forget old messages, checkpoint the
        database's log. Returns how much was done (0: idle)."""
        done = self.expand()
        done += self.index_comments()
        done += self.send_mail()
        done += self.call_webhooks()
        self._purge()
        self.collect_series()
        done += self.run_whines()
        # The writes of this round and of the calls since the last one go
        # into the database file here, not inside a call's commit.
        self.db.checkpoint()
        return done

    def run_whines(self):
        """Queue the mail of the scheduled searches whose time has come,
        every whine_every, in one thread of the process at a time (several
        processes may: each run is claimed once, bugsvc/bugs/whine.py).
        Returns how many messages were queued."""
        now = self.clock()
        if (self._whined_at is not None and now - self._whined_at < self.whine_every) or \
                not self._whine_lock.acquire(blocking=False):
            return 0
        try:
            self._whined_at = now
            return whine.run_due(self.units, now)
        except Exception:                      # noqa: BLE001 - mail goes on
            log.exception("running the scheduled searches failed")
            return 0
        finally:
            self._whine_lock.release()

    def collect_series(self):
        """Count the chart series once a day (UTC), in one thread of the
        process at a time; several processes may: each day's count is
        stored once (bugsvc/bugs/series.py)."""
        today = self.clock().date()
        if self._series_day == today or not self._series_lock.acquire(blocking=False):
            return
        try:
            series.collect(self.units, today)
            self._series_day = today
        except Exception:                      # noqa: BLE001 - mail goes on
            log.exception("collecting the chart series failed")
            self._series_day = today           # tried today; `bugsvc collectstats` retries
        finally:
            self._series_lock.release()

    def run_until_idle(self, rounds=1000):
        """Rounds until one does nothing (what is due now is delivered)."""
        total = 0
        for _ in range(rounds):
            done = self.run_once()
            total += done
            if not done:
                break
        return total

    def loop(self, stop):
        """Rounds until `stop` (a threading.Event) is set, waiting up to
        poll_seconds (or until woken) after an idle round, and
        gather_seconds after one that did less than a batch of work."""
        try:
            while not stop.is_set():
                try:
                    done = self.run_once()
                except Exception:                      # noqa: BLE001 - keep delivering
                    log.exception("delivery round failed")
                    done = 0
                if not done and not stop.is_set():
                    self._wake.wait(self.poll_seconds)
                    self._wake.clear()
                elif done < MAIL_BATCH and self.gather_seconds:
                    stop.wait(self.gather_seconds)
        finally:
            # This thread's own connection; the process's pool serves on.
            self.db.close_connection()

    def start(self, threads=2):
        """Run `threads` delivery threads (daemons); returns a handle whose
        stop() ends them."""
        self._threads = _Threads(self, threads)
        return self._threads

    def alive(self):
        """True while the delivery threads started last all run (False
        before any started, and once one ended)."""
        handle = getattr(self, "_threads", None)
        return bool(handle) and not handle.stopping.is_set() and all(
            thread.is_alive() for thread in handle.threads)

    # Expanding events ---------------------------------------------------------------------

    def expand(self):
        """Make the messages of waiting events, in event order, holding the
        expansion lock. Returns how many events were expanded."""
        with self.db.transaction() as conn:
            if conn.execute("SELECT 1 FROM outbox_events WHERE expanded_at IS NULL"
                            " LIMIT 1").fetchone() is None:
                return 0
        now = self.clock()

        def expand_batch(ctx):
            if not outbox.hold_expansion(ctx.conn, self.owner()):
                return []                  # another worker is expanding them
            rows = outbox.events_to_expand(ctx.conn, EXPAND_BATCH)
            for row in rows:
                recipients.expand(ctx, row)
            outbox.mark_expanded(ctx.conn, [row["id"] for row in rows], now)
            return rows
        # Holding the expansion lock, nobody else writes what it writes: no
        # serializable checks, which on PostgreSQL cancelled most rounds for
        # reading the bugs and events concurrent comments were writing.
        rows = self.units.run(expand_batch, write=True, locked=True, now=now, events=False,
                              catalog=False)
        if rows:
            self._wake.set()
        return len(rows)

    # The comment text index ---------------------------------------------------------------

    def index_comments(self):
        """Add the comments stored since the last round to the comment text
        index, a batch at a time, where the engine's index trails the
        comments (store/sqlite.py). Returns how many were added."""
        if not self.db.dialect.comment_text_index_trails:
            return 0
        # Looked for in a read first: a round with nothing to add (every
        # round of an idle server) takes no turn of the writers.
        with self.db.transaction() as conn:
            if not conn.dialect.comment_text_to_index(conn):
                return 0
        with self.db.transaction(write=True) as conn:
            return conn.dialect.index_comment_text(conn, INDEX_BATCH)

    def _write(self, work, now):
        """work(ctx) in a write transaction of its own, run again from the
        start when it met a concurrent one (PostgreSQL). Returns its result."""
        return self.units.run(work, write=True, now=now, events=False, catalog=False)

    def _queue(self, work):
        """work(conn) in a queue transaction (claiming or settling leased
        messages: Database.transaction(queue=True)), run again when it met
        a concurrent one. Returns its result."""
        for attempt in self.db.attempts(write=True, queue=True):
            with attempt as conn:
                result = work(conn)
        return result

    # Mail ---------------------------------------------------------------------------------

    def _due(self, channel):
        with self.db.transaction() as conn:
            return conn.execute(
                "SELECT 1 FROM outbox_messages WHERE state = ? AND channel = ?"
                " AND next_attempt_at <= ? LIMIT 1",
                (outbox.PENDING, channel, outbox.stamp(self.clock()))).fetchone() is not None

    def _lease(self, take, limit):
        now = self.clock()
        return self._queue(lambda conn: take(conn, self.owner(), now, now + self.lease, limit))

    def send_mail(self):
        """Send a batch of due mail over one connection. Returns how many
        messages were settled (sent, dropped, retried or parked)."""
        if not self._due(outbox.MAIL):
            return 0
        rows = self._lease(outbox.lease_mail, MAIL_BATCH)
        if not rows:
            return 0
        with self.db.transaction() as conn:
            params = settings.load(conn)
        transport = mailer.transport(params, self.config)
        ready = []
        for row in rows:
            try:
                ready.append((row, self._render_mail(row)))
            except Drop as drop:
                self._settle(row, outbox.DROPPED, drop.reason)
            except Exception as exc:                   # noqa: BLE001 - one bad message
                log.exception("rendering message %s failed", row["id"])
                self._failed(row, f"rendering failed: {exc}", self.mail_delays)
        if not ready:
            return len(rows)
        if transport is None:
            for row, _ in ready:
                self._settle(row, outbox.DROPPED, "mail_delivery_method is None")
            return len(rows)
        sender = envelope_sender(params["mailfrom"])
        try:
            for row, mail in ready:
                try:
                    transport.send(sender, mail["To"], mail)
                except mailer.MailFailure as failure:
                    self._failed(row, str(failure), self.mail_delays, failure.permanent)
                else:
                    self._settle(row, outbox.SENT)
        finally:
            transport.close()
        return len(rows)

    def _render_mail(self, row):
        """The EmailMessage of a leased mail message, rendered as its
        recipient now. Errors: Drop."""
        kind = row["kind"]
        now = self.clock()
        if kind in account_mail.RENDERERS:
            return self._write(lambda ctx: account_mail.RENDERERS[kind](ctx, row), now)
        if kind == "whine":
            with self.units.context(user_id=row["user_id"], now=now) as ctx:
                if ctx.caller is None:
                    raise Drop("the account no longer exists")
                return whinemail.render(ctx, row)
        with self.db.transaction() as conn:
            event = outbox.event(conn, row["event_id"])
            exists = row["user_id"] is None or conn.execute(
                "SELECT 1 FROM users WHERE id = ?", (row["user_id"],)).fetchone() is not None
        if event is None:
            raise Drop("the event is gone")
        if not exists:
            raise Drop("the account no longer exists")
        render = {"bug": bugmail.render, "flag": flagmail.render}.get(kind)
        if render is None:
            raise Drop(f"no mail of the kind '{kind}'")
        with self.units.context(user_id=row["user_id"], now=now) as ctx:
            return render(ctx, row, event)

    # Webhooks -----------------------------------------------------------------------------

    def call_webhooks(self):
        """Make one due webhook call (a thread makes one at a time, and each
        webhook has one call in flight at a time, so a slow receiver holds
        up one thread). Returns how many calls were settled."""
        if not self._due(outbox.WEBHOOK):
            return 0
        rows = self._lease(outbox.lease_webhook, 1)
        for row in rows:
            try:
                self._call(row)
            except Exception as exc:                   # noqa: BLE001 - one bad call
                log.exception("webhook call %s failed", row["id"])
                self._failed(row, f"the call could not be made: {exc}", self.webhook_delays)
        return len(rows)

    def _call(self, row):
        now = self.clock()
        with self.db.transaction() as conn:
            webhook = conn.execute("SELECT id, user_id, name, url, enabled, secret,"
                                   " previous_secret, previous_secret_until FROM webhooks"
                                   " WHERE id = ?", (row["webhook_id"],)).fetchone()
            event = outbox.event(conn, row["event_id"])
            allow_private = settings.load(conn)["webhooks_allow_private_addresses"] == "1"
        if webhook is None or event is None:
            self._settle(row, outbox.DROPPED, "the webhook or the event is gone")
            return
        try:
            with self.units.context(user_id=webhook["user_id"], now=now) as ctx:
                payload = webhook_payload.build(ctx, webhook, row, event)
        except Drop as drop:
            self._settle(row, outbox.DROPPED, drop.reason)
            return
        body = orjson.dumps(payload)
        key = outbox.message_data(row).get("key") or f"msg_{row['id']}"
        secrets_in_use = [webhook["secret"]]
        if webhook["previous_secret"] and (webhook["previous_secret_until"] or "") > \
                outbox.stamp(now):
            secrets_in_use.append(webhook["previous_secret"])
        headers = signature.headers(secrets_in_use, key, int(now.timestamp()), body)
        try:
            webhook_http.post(webhook["url"], body, headers, allow_private,
                              timeout=self.webhook_timeout)
        except addresses.AddressRefused as refused:
            self._webhook_failed(row, webhook, f"the URL may not be called: {refused}",
                                 permanent=True)
        except webhook_http.CallFailed as failure:
            if failure.gone:
                self._webhook_failed(row, webhook, str(failure), permanent=True,
                                     reason="its receiver answered 410 Gone")
            else:
                self._webhook_failed(row, webhook, str(failure),
                                     retry_after=failure.retry_after)
        else:
            self._tell(row, outbox.SENT)

            def settle(conn):
                if outbox.finish(conn, row["id"], self.owner(), outbox.SENT, self.clock()):
                    conn.execute("UPDATE webhooks SET last_attempt_at = ?, last_success_at = ?,"
                                 " last_error = '' WHERE id = ?",
                                 (outbox.stamp(now), outbox.stamp(now), webhook["id"]))
            self._queue(settle)

    def _webhook_failed(self, row, webhook, error, permanent=False, retry_after=None,
                        reason=None):
        parked = self._failed(row, error, self.webhook_delays, permanent, retry_after)
        now = self.clock()
        reason = reason or "its calls kept failing"

        def record(ctx):
            ctx.conn.execute("UPDATE webhooks SET last_attempt_at = ?, last_error = ?"
                             " WHERE id = ?", (outbox.stamp(now), error[:1000], webhook["id"]))
            if not parked:
                return
            disabled = ctx.conn.execute(
                "UPDATE webhooks SET enabled = 0, disabled_reason = ? WHERE id = ?"
                " AND enabled = 1", (reason, webhook["id"])).rowcount
            if disabled and ctx.param("mail_delivery_method") != "None":
                outbox.add_message(ctx.conn, outbox.MAIL, "webhook_disabled", now,
                                   user_id=webhook["user_id"],
                                   data={"webhook_id": webhook["id"], "name": webhook["name"],
                                         "url": webhook["url"], "reason": reason,
                                         "error": error})
        self._write(record, now)
        if parked:
            log.warning("webhook %s disabled: %s", webhook["id"], reason)

    # Settling -----------------------------------------------------------------------------

    def _tell(self, row, outcome):
        if self.on_outcome is not None:
            self.on_outcome(row["channel"], outcome)

    def _settle(self, row, state, reason=""):
        self._tell(row, state)
        return self._queue(lambda conn: outbox.finish(conn, row["id"], self.owner(), state,
                                                      self.clock(), reason))

    def delay(self, attempt, delays, retry_after=None):
        """Seconds before attempt `attempt` + 1 (attempt: the attempts made,
        1 or more), jittered; at least what the receiver asked for."""
        base = delays[min(attempt, len(delays)) - 1]
        seconds = base * self._random.uniform(1 - JITTER, 1 + JITTER)
        return max(seconds, retry_after or 0)

    def _failed(self, row, error, delays, permanent=False, retry_after=None):
        """Record a failed attempt: park the message when it failed for good
        or for the last time, else schedule the next attempt. Returns True
        when it was parked."""
        attempt = row["attempts"] + 1
        if permanent or attempt > len(delays):
            self._settle(row, outbox.PARKED, error)
            log.warning("message %s parked after %d attempts: %s", row["id"], attempt, error)
            return True
        self._tell(row, "retry")
        when = self.clock() + timedelta(seconds=self.delay(attempt, delays, retry_after))
        self._queue(lambda conn: outbox.retry_at(conn, row["id"], self.owner(), when, error))
        return False

    def _purge(self):
        now = self.clock()
        if self._purged_at is not None and now - self._purged_at < PURGE_EVERY:
            return
        self._purged_at = now
        self._queue(lambda conn: outbox.purge(conn, now - KEEP))


class _Threads:
    """Delivery threads of one process."""

    def __init__(self, deliverer, count):
        self.deliverer = deliverer
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=deliverer.loop, args=(self.stopping,),
                                         name=f"bugsvc-delivery-{index}", daemon=True)
                        for index in range(count)]
        for thread in self.threads:
            thread.start()

    def stop(self, timeout=5):
        """Ask the threads to stop after their current step, and wait for
        them at most `timeout` seconds in all (a step cut short by the
        process's end leaves its lease to run out: nothing is lost)."""
        self.stopping.set()
        self.deliverer.wake()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
