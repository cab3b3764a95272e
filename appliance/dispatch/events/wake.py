"""Waking event streams when an event commits, instead of each stream polling.

Every open stream of a process waits on one condition for "an event of my company newer than
what I have read". Who tells it:

- this process: ``record_event`` publishes the event's id once its transaction has committed
  (``after_commit``), so the stream's next read sees the row;
- other processes and hosts, on PostgreSQL: ``record_event`` also sends ``NOTIFY`` inside the
  transaction (PostgreSQL delivers it at commit, never for a rollback), and one connection per
  process ``LISTEN``s and publishes what it hears;
- other processes on SQLite (several serving processes on one file), which has no
  notification between processes: one thread per process looks at the file's ``data_version``
  every 50 ms while streams are open (no query unless something committed) and publishes the
  new events' ids, once for all the process's streams.

The stream's own poll (``stream.POLL_SECONDS``) remains the fallback: a lost PostgreSQL
connection, a watcher that cannot open the file.

Ids are kept per (database, company): a stream compares with the newest id published for its
own company, so an event heard twice (in process and by NOTIFY) wakes it once, and streams of
other databases in the same process (tests) never wake each other.
"""

from __future__ import annotations

import contextlib
import logging
import select
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

import peewee

from appliance.common import lifecycle
from appliance.common.db import after_commit, is_sqlite

log = logging.getLogger("appliance.events")

CHANNEL = "appliance_events"
# How often a process looks for other processes' commits on SQLite while streams are open.
WATCH_SECONDS = 0.05
Key = tuple[str, int]  # (database, company)


class Wakes:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._latest: dict[Key, int] = {}
        self._listeners: dict[str, threading.Thread] = {}
        self._listening: dict[str, threading.Event] = {}
        self._open: dict[str, int] = {}  # open streams per database

    def latest(self, key: Key) -> int:
        with self._changed:
            return self._latest.get(key, 0)

    def publish(self, key: Key, event_id: int) -> None:
        with self._changed:
            if event_id > self._latest.get(key, 0):
                self._latest[key] = event_id
                self._changed.notify_all()

    def wait(self, key: Key, seen: int, timeout: float) -> bool:
        """Until an event newer than ``seen`` is published for ``key`` (True), or ``timeout``
        seconds pass (False: poll anyway)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._latest.get(key, 0) > seen, timeout)

    def listening(self, database: peewee.Database | peewee.DatabaseProxy) -> threading.Event:
        """Set while this process hears other processes' events on ``database``."""
        with self._changed:
            return self._listening.setdefault(database_key(database), threading.Event())

    @contextlib.contextmanager
    def hearing(self, database: peewee.Database | peewee.DatabaseProxy) -> Iterator[None]:
        """While a stream is open: this process hears other processes' events on ``database``
        (one thread per database, started by the first open stream, ended after the last)."""
        real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
        name = database_key(real)
        with self._changed:
            self._open[name] = self._open.get(name, 0) + 1
            thread = self._listeners.get(name)
            if thread is None or not thread.is_alive():
                target = self._watch if is_sqlite(real) else self._listen
                thread = threading.Thread(target=target, args=(real, name), name="events", daemon=True)
                self._listeners[name] = thread
                thread.start()
        try:
            yield
        finally:
            with self._changed:
                self._open[name] -= 1

    def _needed(self, name: str) -> bool:
        """Whether the hearing thread of ``name`` goes on; when not, it is forgotten under the
        same lock that a new stream checks it with, so no stream is left without one."""
        with self._changed:
            if self._open.get(name, 0) > 0 and not lifecycle.stopping.is_set():
                return True
            self._listeners.pop(name, None)
            return False

    def _stopped_hearing(self, name: str, listening: threading.Event) -> None:
        with self._changed:
            successor = self._listeners.get(name)
            if successor is None or successor is threading.current_thread():
                listening.clear()

    def _watch(self, database: peewee.Database, name: str) -> None:
        """SQLite: another process's commit changes the file's data_version (a read of shared
        memory, no query); only then are the new events' ids read, once for all streams."""
        listening = self.listening(database)
        connection = None
        try:
            connection = sqlite3.connect(f"file:{database.database}?mode=ro", uri=True, isolation_level=None)
            version = connection.execute("PRAGMA data_version").fetchone()[0]
            (last,) = connection.execute("SELECT COALESCE(MAX(id), 0) FROM realtime_event").fetchone()
            listening.set()
            while self._needed(name):
                time.sleep(WATCH_SECONDS)
                now = connection.execute("PRAGMA data_version").fetchone()[0]
                if now == version:
                    continue
                version = now
                rows = connection.execute(
                    "SELECT company_id, MAX(id) FROM realtime_event WHERE id > ? GROUP BY company_id", (last,)
                ).fetchall()
                for company, event_id in rows:
                    self.publish((name, company), event_id)
                    last = max(last, event_id)
        except sqlite3.Error as exc:  # the stream's poll still delivers
            log.warning("cannot watch for other processes' events: %s", exc)
        finally:
            self._stopped_hearing(name, listening)
            if connection is not None:
                connection.close()

    def _listen(self, database: peewee.Database, name: str) -> None:
        """PostgreSQL: one connection LISTENs, reconnecting after a loss."""
        import psycopg2

        listening = self.listening(database)
        while self._needed(name):
            try:
                connection = psycopg2.connect(database=database.database, **database.connect_params)
            except psycopg2.Error as exc:
                log.warning("cannot listen for events (streams poll meanwhile): %s", exc)
                lifecycle.stopping.wait(5)
                continue
            try:
                connection.autocommit = True
                with connection.cursor() as cursor:
                    cursor.execute(f"LISTEN {CHANNEL}")
                listening.set()
                self._hear(connection, name)
            except psycopg2.Error as exc:
                log.warning("event listening lost (streams poll meanwhile): %s", exc)
                lifecycle.stopping.wait(1)
            finally:
                self._stopped_hearing(name, listening)
                connection.close()

    def _hear(self, connection: Any, name: str) -> None:
        while self._needed(name):
            if select.select([connection], [], [], 1.0) == ([], [], []):
                continue
            connection.poll()
            while connection.notifies:
                company, _, event_id = connection.notifies.pop(0).payload.partition(":")
                if company.isdigit() and event_id.isdigit():
                    self.publish((name, int(company)), int(event_id))


wakes = Wakes()  # one per process: what every stream of the process waits on


def database_key(database: peewee.Database | peewee.DatabaseProxy) -> str:
    """The database's name (SQLite: its file), so that two databases never share wakes."""
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    return str(real.database)


def announce(database: peewee.Database | peewee.DatabaseProxy, company_id: int, event_id: int) -> None:
    """Wake the company's streams once the event's transaction commits: in this process, and
    on PostgreSQL in every process listening."""
    key = (database_key(database), company_id)
    if not is_sqlite(database):
        database.execute_sql("SELECT pg_notify(%s, %s)", (CHANNEL, f"{company_id}:{event_id}"))
    after_commit(database, lambda: wakes.publish(key, event_id))
