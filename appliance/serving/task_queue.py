"""waitress's task queue, patched to hand a request to the thread that went idle last (a warm
thread) instead of the one idle longest."""

from __future__ import annotations

import threading

from waitress.task import ThreadedTaskDispatcher


class _MostRecentlyIdleFirst(threading.Condition):
    """waitress's task queue condition, waking the thread that went idle last instead of the one
    idle longest. With the default hundred threads and a few busy connections, first-in-first-out
    hands every request to another cold thread (its stack, its database connection's page cache);
    measured on GET /me with two processes: 28-31 context switches per request instead of 13-20,
    a quarter fewer requests per second."""

    def notify(self, n: int = 1) -> None:
        if not self._is_owned():  # type: ignore[attr-defined]
            raise RuntimeError("cannot notify on un-acquired lock")
        waiters = self._waiters  # type: ignore[attr-defined]
        while waiters and n > 0:
            waiter = waiters.pop()
            try:
                waiter.release()
            except RuntimeError:  # released by an interrupted notify already (gh-92530)
                continue
            n -= 1


def _task_dispatcher(threads: int) -> ThreadedTaskDispatcher:
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.queue_cv = _MostRecentlyIdleFirst(dispatcher.lock)
    dispatcher.set_thread_count(threads)
    return dispatcher
