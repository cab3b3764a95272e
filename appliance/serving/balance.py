"""Connection balancing between serving processes that share one listening socket: each new
connection goes to a process that holds no more open connections than any other, and each
listener's poll loop beats a heartbeat the supervisor reads."""

from __future__ import annotations

import contextlib
import mmap
import os
import time
from collections.abc import Callable, Iterable

from waitress import wasyncore


class ConnectionBalance:
    """The open connections of each serving process on each listener, in memory the processes
    share (an anonymous mapping made before the fork), so that a new connection goes to a process
    that holds no more than any other.

    Without it the kernel hands a connection to whichever process calls accept first, and a burst
    of connections (a client opening its pool, a proxy's keep-alive connections) can land mostly
    on one process: that process's threads then take turns on one interpreter lock (dozens of
    hand-offs per request) while another process idles. A process whose count is above the
    lowest leaves its listening socket out of its poll until it is not."""

    NOT_SERVING = 2**31 - 1  # starting, stopping or gone: never the lowest

    def __init__(self, processes: int, names: list[str]) -> None:
        self.names = names
        self._memory = mmap.mmap(-1, 4 * processes * len(names))
        self._counts = memoryview(self._memory).cast("i")
        for slot in range(processes * len(names)):
            self._counts[slot] = self.NOT_SERVING
        # A wake-up pipe per process and listener, made before the fork. A process decides whether
        # to poll the listener only when its own loop turns; one that left it out while it was above
        # another sleeps on when the other passes it. Without a wake-up every process could leave
        # the listener out at once, and new connections waited in the backlog until some loop
        # turned for another reason (with 300 slow clients trickling a byte each every 3 s: an
        # accept about every 0.4 s, fresh requests timing out after 5 s).
        self._pipes = [os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC) for _ in range(processes * len(names))]
        # Heartbeats: each listener's poll loop writes the time (CLOCK_MONOTONIC, the same clock in
        # every process of the host) on every turn, at least once a second when idle. The parent
        # reads them (``silent_for``) to find a serving process that stopped answering.
        self._beat_memory = mmap.mmap(-1, 8 * processes * len(names))
        self._beats = memoryview(self._beat_memory).cast("d")

    def _slot(self, process: int, name: str) -> int:
        return process * len(self.names) + self.names.index(name)

    def seat(self, process: int, name: str) -> Callable[[int], bool]:
        """``process``'s place on listener ``name``: a function that publishes its open
        connections and tells whether it holds no more than any other process. The poll loop asks
        it about ten times per request, so the slots are worked out here, once."""
        counts, beats, own = self._counts, self._beats, self._slot(process, name)
        others = self._others(own, name)
        accepting = True
        monotonic = time.monotonic

        def may_accept(open_connections: int) -> bool:
            nonlocal accepting
            beats[own] = monotonic()
            counts[own] = open_connections
            for slot in others:
                if counts[slot] < open_connections:
                    if accepting:  # leaving the listener out: those below take over, awake
                        accepting = False
                        self._wake(other for other in others if counts[other] < open_connections)
                    return False
            accepting = True
            return True

        return may_accept

    def wake_fd(self, process: int, name: str) -> int:
        """The end of ``process``'s wake-up pipe on listener ``name`` that its poll loop reads."""
        return self._pipes[self._slot(process, name)][0]

    def _others(self, own: int, name: str) -> list[int]:
        column = range(self.names.index(name), len(self._counts), len(self.names))
        return [slot for slot in column if slot != own]

    def _wake(self, slots: Iterable[int]) -> None:
        for slot in slots:
            with contextlib.suppress(OSError):  # a full pipe: a wake-up is pending already
                os.write(self._pipes[slot][1], b"\0")

    def may_accept(self, process: int, name: str, open_connections: int) -> bool:
        """Publish ``process``'s open connections on listener ``name``; whether it is (one of)
        the processes holding the fewest."""
        return self.seat(process, name)(open_connections)

    def beat(self, process: int, name: str) -> None:
        """``process``'s loop on listener ``name`` turned (also when it takes no connections)."""
        self._beats[self._slot(process, name)] = time.monotonic()

    def forget_beats(self, process: int) -> None:
        """Before (re)starting ``process``: no heartbeat yet, so it is not judged while it starts."""
        for name in self.names:
            self._beats[self._slot(process, name)] = 0.0

    def silent_for(self, process: int, now: float) -> float | None:
        """How long the quietest of ``process``'s listener loops has not turned; None before
        every loop has turned once (a process still starting)."""
        beats = [self._beats[self._slot(process, name)] for name in self.names]
        if not all(beats):
            return None
        return max(0.0, now - min(beats))

    def all_serving(self) -> bool:
        """Whether every process has started serving on every listener."""
        return all(count != self.NOT_SERVING for count in self._counts)

    def not_serving(self, process: int, name: str | None = None) -> None:
        """``process`` takes no connections on ``name`` (every listener when None); the others
        are woken to take over."""
        for each in self.names if name is None else [name]:
            own = self._slot(process, each)
            self._counts[own] = self.NOT_SERVING
            self._wake(self._others(own, each))


class _WakeUp(wasyncore.file_dispatcher):
    """The read end of a wake-up pipe in a listener's poll loop: a byte turns the loop, so that
    the listener's readable() is asked again (ConnectionBalance)."""

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def handle_read(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while self.recv(4096):
                pass
