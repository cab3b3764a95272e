"""Group commit: writes that arrive together share one transaction and one commit.

Every commit writes each page it changed to the log (and on PostgreSQL waits for it to reach the
disk). A payout submission changes about twelve pages; two submitted at the same moment change
mostly the same ones (the table's last page, the status and due indexes, the transitions), so
committing them together writes far less than committing them one after the other, and the
write lock changes hands once instead of twice.

One writer thread per group and process does the writing. Callers queue their work and wait; the
writer waits for the write lock (in its own thread, so the kernel wakes it the moment another
process releases the lock: no helper thread to hand the lock over, which under load cost about
half a millisecond of an idle lock per hand-over), then takes everything queued (what queued
while it waited joins), runs the pieces one after the other in one write transaction and commits.
Nobody is answered before the commit: a piece that succeeded returns its value once the batch
has committed; a piece that raised raises in its own caller and leaves nothing behind: the
transaction is rolled back and the other pieces run again in a new one (still holding the write
lock), so a piece must be a function of what the database holds (it is: each is one request's
writes); if the commit fails, every piece of the batch raises that error. A piece refused for an
expected reason should return its refusal rather than raise (the payout admission does): a raise
costs its batch a second run.

A caller waits for SQLite's write lock as long as any writer does (the busy timeout): if the
writer has not taken its piece by then (another process holds the lock: stopped, or stuck), the
piece is withdrawn and the caller gets WriteLockTimeout (a 503), as a plain write would. A piece
the writer has taken is waited for to the end (the writer holds the lock; it is running).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import Any

import peewee

from appliance.common.db import is_sqlite, patient_write_lock, patient_write_transaction, write_lock_bound
from appliance.common.faults import WriteLockTimeout

MAX_BATCH = 64  # one transaction's worth: a larger queue is committed in several batches
IDLE_SECONDS = 30.0  # a writer with nothing to do for this long ends (a new one starts on demand)


class _Piece[T]:
    __slots__ = ("done", "error", "value", "work")

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        self.done = threading.Event()  # set when the piece's batch has committed or failed
        self.value: Any = None
        self.error: BaseException | None = None


class GroupCommit:
    def __init__(self, database: peewee.Database | peewee.DatabaseProxy) -> None:
        self.database = database
        self.batches = 0  # committed or failed, for tests and metrics
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._work_queued = threading.Condition(self._lock)
        self._queue: list[_Piece[Any]] = []
        self._running = False  # a batch is between its write lock and its commit
        self._writer: threading.Thread | None = None

    def run[T](self, work: Callable[[], T]) -> T:
        """Run ``work`` (which writes through ``self.database``) in a committed transaction,
        shared with whatever else is submitted at the same moment; returns its value once it is
        committed, or raises its error (or the commit's)."""
        piece: _Piece[T] = _Piece(work)
        with self._lock:
            self._queue.append(piece)
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._write, name="group-commit", daemon=True)
                self._writer.start()
            self._work_queued.notify()
        bound = write_lock_bound(self.database)
        if not piece.done.wait(bound):
            with self._lock:
                waiting = piece in self._queue
                if waiting:
                    self._queue.remove(piece)
            if waiting:
                raise WriteLockTimeout(f"no write lock within {bound:g} s: another process holds it")
            piece.done.wait()  # taken: the writer holds the lock and is running it
        if piece.error is not None:
            raise piece.error
        return piece.value

    def _write(self) -> None:
        """The writer: a batch whenever something is queued; ends after IDLE_SECONDS idle."""
        # PostgreSQL: the connection goes back to the pool after each batch, so that a dead one
        # (the server restarted) is found out and replaced on the next checkout (common/db.py).
        # SQLite's stays open while the writer lives.
        opened: peewee.Database | None = None  # the database this thread has a connection to
        try:
            while True:
                with self._lock:
                    if not self._queue and not self._work_queued.wait_for(lambda: self._queue, IDLE_SECONDS):
                        self._writer = None
                        return
                real = _real(self.database)
                if opened is not None and opened is not real:  # a proxy pointed elsewhere since
                    _close(opened)
                try:
                    real.connect(reuse_if_open=True)
                except Exception as failed:  # no database: the batch that would have run fails
                    self._fail(self._take(), failed)
                    continue
                opened = real
                if not self._commit() or not is_sqlite(real):
                    _close(real)
                    opened = None
        finally:
            if opened is not None:
                _close(opened)

    def _take(self) -> list[_Piece[Any]]:
        with self._lock:
            batch = self._queue[:MAX_BATCH]
            del self._queue[:MAX_BATCH]
            return batch

    def _fail(self, batch: list[_Piece[Any]], error: BaseException) -> None:
        for piece in batch:
            if piece.error is None:
                piece.error, piece.value = error, None
            piece.done.set()

    def _commit(self) -> bool:
        """Take the write lock, then the batch (whatever queued meanwhile joins), run it, commit;
        False when the transaction itself failed (not one of its pieces)."""
        batch: list[_Piece[Any]] = []
        try:
            with patient_write_lock(self.database):
                self._running = True
                batch = self._take()
                pending = batch
                while pending:
                    pending = self._attempt(pending)
        except BaseException as failed:  # the commit (or the transaction around it) failed
            # (Nothing taken yet: the transaction could not begin, and the queue's head fails.)
            batch = batch or self._take()
            self._fail(batch, failed)
            if not isinstance(failed, Exception):
                raise
            return False
        finally:
            self._running = False
            self.batches += 1
            for piece in batch:
                piece.done.set()
        return True

    def _attempt(self, pending: list[_Piece[Any]]) -> list[_Piece[Any]]:
        """Run ``pending`` in one transaction and commit it. When a piece raises, the transaction
        is rolled back (nothing of any piece is kept), that piece keeps its error, and the pieces
        after it are returned to run again in a new transaction (the pieces before it too, which
        ran but were rolled back): a piece is a function of what the database holds, so it does the
        same when run again. No savepoint per piece: two statements each, and a failure is rare."""
        failed: _Piece[Any] | None = None
        with contextlib.suppress(_RollBack), patient_write_transaction(self.database):
            for piece in pending:
                _run_piece(piece)
                if piece.error is not None:
                    failed = piece
                    raise _RollBack()
        return [] if failed is None else [each for each in pending if each is not failed]


def _real(database: peewee.Database | peewee.DatabaseProxy) -> peewee.Database:
    return database.obj if isinstance(database, peewee.DatabaseProxy) else database


def _close(database: peewee.Database) -> None:
    with contextlib.suppress(Exception):
        database.close()


class _RollBack(Exception):
    """Leaves the transaction a piece failed in, rolling it back."""


def _run_piece(piece: _Piece[Any]) -> None:
    try:
        piece.value = piece.work()
    except Exception as error:
        piece.error = error
