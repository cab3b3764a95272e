"""Group commit: writes that arrive together share one transaction and one commit.

Every commit writes each page it changed to the log (and on PostgreSQL waits for it to reach the
disk). A payout submission changes about twelve pages; two submitted at the same moment change
mostly the same ones (the table's last page, the status and due indexes, the transitions), so
committing them together writes far less than committing them one after the other, and the
write lock changes hands once instead of twice.

The first caller to find no batch running leads: it takes everything queued (its own work
included), runs each piece in a savepoint of one write transaction and commits. Whoever queued
meanwhile waits for the next batch, led by the first of them. Nobody is answered before the
commit: a piece that succeeded returns its value once the batch has committed; a piece that
raised is rolled back to its savepoint alone and raises in its own caller; if the commit fails,
every piece of the batch raises that error. A batch of one runs without a savepoint, as a plain
write transaction would.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import Any

import peewee

from appliance.common.db import write_transaction

MAX_BATCH = 64  # one transaction's worth: a larger queue is committed in several batches


class _Piece[T]:
    __slots__ = ("done", "error", "lead", "value", "work")

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        self.done = threading.Event()  # set when the piece's batch has committed or failed
        self.lead = False  # set (with done) when this piece's thread is to lead the next batch
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
        self._queue: list[_Piece[Any]] = []
        self._leading = False

    def run[T](self, work: Callable[[], T]) -> T:
        """Run ``work`` (which writes through ``self.database``) in a committed transaction,
        shared with whatever else is submitted at the same moment; returns its value once it is
        committed, or raises its error (or the commit's)."""
        piece: _Piece[T] = _Piece(work)
        with self._lock:
            self._queue.append(piece)
            lead = not self._leading
            self._leading = True
        while not lead:
            piece.done.wait()
            if not piece.lead:
                break
            piece.lead, lead = False, True
            piece.done.clear()
        if lead:
            self._lead()
        if piece.error is not None:
            raise piece.error
        return piece.value

    def _lead(self) -> None:
        with self._lock:
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
        try:
            self._commit(batch)
        finally:
            self.batches += 1
            with self._lock:
                successor = self._queue[0] if self._queue else None
                self._leading = successor is not None
            for piece in batch:
                piece.done.set()
            if successor is not None:  # the next batch is led by the first who queued for it
                successor.lead = True
                successor.done.set()

    def _commit(self, batch: list[_Piece[Any]]) -> None:
        try:
            with write_transaction(self.database):
                if len(batch) == 1:
                    _run_piece(batch[0])
                    if batch[0].error is not None:
                        raise _RollBack()
                else:
                    for piece in batch:
                        # A savepoint each: a failure undoes its own piece only.
                        with contextlib.suppress(_RollBack), self.database.atomic():
                            _run_piece(piece)
                            if piece.error is not None:
                                raise _RollBack()
        except _RollBack:  # the batch of one failed: nothing of it is kept
            pass
        except BaseException as failed:  # the commit (or the transaction around it) failed
            for piece in batch:
                if piece.error is None:
                    piece.error, piece.value = failed, None
            if not isinstance(failed, Exception):
                raise


class _RollBack(Exception):
    """Leaves the savepoint (or the batch of one) that a failed piece is in, rolling it back."""


def _run_piece(piece: _Piece[Any]) -> None:
    try:
        piece.value = piece.work()
    except Exception as error:
        piece.error = error
