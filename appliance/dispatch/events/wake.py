"""Waking event streams when an event commits, instead of each stream polling.

Every open stream of a process waits on one condition for "an event of my company newer than
what I have read". Who tells it:

- this process: ``record_event`` publishes the event's id once its transaction has committed
  (``after_commit``), so the stream's next read sees the row;
- other processes and hosts, on PostgreSQL: ``record_event`` also sends ``NOTIFY`` inside the
  transaction (PostgreSQL delivers it at commit, never for a rollback), and one connection per
  process ``LISTEN``s and publishes what it hears;
- on SQLite, another serving process has no way to tell this one: there the stream's poll
  (``stream.POLL_SECONDS``) remains the fallback, as it is everywhere for a lost connection.

Ids are kept per (database, company): a stream compares with the newest id published for its
own company, so an event heard twice (in process and by NOTIFY) wakes it once, and streams of
other databases in the same process (tests) never wake each other.
"""

from __future__ import annotations

import logging
import select
import threading
from typing import Any

import peewee

from appliance.common import lifecycle
from appliance.common.db import after_commit, is_sqlite

log = logging.getLogger("appliance.events")

CHANNEL = "appliance_events"
Key = tuple[str, int]  # (database, company)


class Wakes:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._latest: dict[Key, int] = {}
        self._listeners: dict[str, threading.Thread] = {}
        self._listening: dict[str, threading.Event] = {}

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
        """Set while this process's LISTEN on ``database`` is in place."""
        with self._changed:
            return self._listening.setdefault(database_key(database), threading.Event())

    def listen(self, database: peewee.Database | peewee.DatabaseProxy) -> None:
        """Hear other processes' events on PostgreSQL (one listening thread per database and
        process, started by the first stream); nothing to do on SQLite."""
        real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
        if is_sqlite(real):
            return
        name = database_key(real)
        with self._changed:
            thread = self._listeners.get(name)
            if thread is not None and thread.is_alive():
                return
            thread = threading.Thread(
                target=self._listen, args=(real, name), name=f"events-listen-{name}", daemon=True
            )
            self._listeners[name] = thread
        thread.start()

    def _listen(self, database: peewee.Database, name: str) -> None:
        import psycopg2

        listening = self.listening(database)
        while not lifecycle.stopping.is_set():
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
                listening.clear()
                connection.close()

    def _hear(self, connection: Any, name: str) -> None:
        while not lifecycle.stopping.is_set():
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
