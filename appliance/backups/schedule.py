"""Scheduled backups inside `appliance serve`: a leased job (one process of the whole deployment
at a time: the ``backup`` row of job_lease in the dispatch database) that, every
``backup_every_hours``:

1. takes an encrypted backup (appliance/backup.py ``create_backup``, sealed under the backup
   passphrase) named ``appliance-<UTC time>``, into ``backup_to_dir`` and/or the bucket;
2. drills it (appliance/backups/drill.py) as stored in each destination: read back from the
   bucket, restored into a scratch directory of the data directory, checked, removed;
3. prunes each destination beyond the retention counts (appliance/backups/retention.py), never
   the newest backup whose drill passed nor a backup whose latest drill failed (the evidence of a
   critical finding, kept until it drills well or an administrator removes it);
4. drills once more the kept backup of each destination drilled least recently, so that a backup
   damaged where it is kept (bit rot, a hand that altered it) is found within a few intervals.

Every run and drill is recorded (appliance/backups/history.py): health and metrics read them. The
interval counts from the start of the last run that succeeded; a run that failed is tried again
after a tenth of the interval (at least a minute, at most the interval)."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

from appliance.backup import BackupError, Unlock, create_backup
from appliance.backups import history
from appliance.backups.drill import drill, scratch_directory
from appliance.backups.retention import Retention, to_keep
from appliance.backups.storage import (
    Destination,
    LocalFolder,
    StorageError,
    backup_name,
    destinations,
    taken_at,
)
from appliance.common import clock
from appliance.common.jobs import run_worker
from appliance.common.lease import SingletonLease
from appliance.common.runtime import Worker
from appliance.common.sealing import Sealer, SealingError
from appliance.dispatch.db import database
from appliance.dispatch.models import JobLease
from appliance.settings import Settings

log = logging.getLogger("appliance.backups")
NAME = "backup"
# A run holds the lease this long (taken again by another process only after it, or at once when
# the holder was a process of this host that died).
LEASE = timedelta(hours=2)
RETRY = timedelta(minutes=1)
NO_PASSPHRASE = "scheduled backups are encrypted: set APPLIANCE_BACKUP_PASSPHRASE or backup_passphrase_file"


class NoPassphrase(Exception):
    pass


def backup_passphrase(settings: Settings) -> str:
    """The passphrase scheduled backups are sealed under: the setting (the environment) or its file."""
    if settings.backup_passphrase:
        return settings.backup_passphrase
    if settings.backup_passphrase_file:
        try:
            text = Path(settings.backup_passphrase_file).read_text(encoding="utf-8").rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise NoPassphrase(f"backup_passphrase_file {settings.backup_passphrase_file}: {exc}") from None
        if text:
            return text
    raise NoPassphrase(NO_PASSPHRASE)


class BackupScheduler:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.interval = timedelta(hours=settings.backup_every_hours)
        self.turn = SingletonLease.of(JobLease, NAME, duration=LEASE)
        self.retention = Retention(
            settings.backup_keep_last,
            settings.backup_keep_hourly,
            settings.backup_keep_daily,
            settings.backup_keep_weekly,
        )
        self.kept = settings.backup_history_kept
        # Set when serve stops: a run ends after the step under way (a drill, a prune), not
        # after the whole run, so that a stop is not held up by minutes of drills.
        self.stopping = threading.Event()

    def worker(self) -> Worker:
        idle = max(1.0, min(60.0, self.interval.total_seconds() / 10))

        def work(stop: threading.Event) -> None:
            self.stopping = stop
            run_worker("backups", database, stop, self.run_pass, idle_seconds=idle)

        return work

    def _due(self) -> bool:
        interval = self.interval
        return self.turn.take(
            due=lambda row, moment: row.last_run_at is None or row.last_run_at + interval <= moment,
            create={"last_run_at": None},
        )

    def run_pass(self) -> int:
        """One scheduled backup when one is due and this process holds the turn. Returns 0 even
        after a run, so that the worker pauses before the next pass: a run longer than the
        interval is followed by the next one a pause later, not at once, and another process
        may take its turn meanwhile."""
        if not self._due():
            return 0
        started = clock.now()
        passed = False
        try:
            passed = self.run(started)
        finally:
            retry = min(self.interval, max(RETRY, self.interval / 10))
            self.turn.release(last_run_at=started if passed else started - self.interval + retry)
        return 0

    def run(self, started: datetime) -> bool:
        """Back up, drill, prune, drill again; False when no backup could be taken."""
        settings = self.settings
        name = backup_name(started)
        places = destinations(settings)
        labels = ", ".join(d.label for d in places)
        began = time.monotonic()
        try:
            passphrase = backup_passphrase(settings)
            sealer = Sealer.with_passphrase(passphrase)
            with scratch_directory(settings.data_dir) as scratch:
                local = next((d for d in places if isinstance(d, LocalFolder)), None)
                out = local.path(name) if local is not None else scratch / "outgoing" / name
                out.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                manifest = create_backup(settings, out, sealer=sealer)
                for place in places:
                    place.put(name, out)
        except (BackupError, StorageError, SealingError, NoPassphrase, OSError) as exc:
            log.error("scheduled backup %s failed: %s", name, exc)
            history.record_run(
                name,
                started,
                passed=False,
                destinations=labels,
                seconds=round(time.monotonic() - began, 3),
                error=str(exc),
                kept=self.kept,
            )
            return False
        size = sum(int(entry["size"]) for entry in manifest["files"])
        seconds = round(time.monotonic() - began, 3)
        history.record_run(
            name, started, passed=True, destinations=labels, size=size, seconds=seconds, kept=self.kept
        )
        log.info("scheduled backup %s taken in %.1f s (%d bytes) into %s", name, seconds, size, labels)
        unlock = Unlock(passphrase=lambda: passphrase, expects_encryption=True)  # always sealed
        steps = [
            *[lambda p=p: self.drill(p, name, unlock) for p in places],
            *[lambda p=p: self.prune(p) for p in places],
            *[lambda p=p: self.drill_again(p, name, unlock) for p in places],
        ]
        for step in steps:
            if self.stopping.is_set():
                log.info("scheduled backup %s: serve is stopping, the rest waits for the next run", name)
                break
            self.turn.renew()  # a long run keeps its turn (LEASE from each step's start)
            step()
        return True

    def drill(self, place: Destination, name: str, unlock: Unlock) -> bool:
        """Restore ``name`` as kept in ``place`` and check it; the result is recorded."""
        began = time.monotonic()
        try:
            with scratch_directory(self.settings.data_dir) as scratch:
                source = place.fetch(name, scratch / "fetched")
                result = drill(source, scratch, unlock, label=name)
            passed, detail = result.passed, result.detail
        except Exception as exc:  # whatever stops a drill fails it, and is recorded
            passed, detail = False, f"{type(exc).__name__}: {exc}"
        seconds = round(time.monotonic() - began, 3)
        history.record_drill(name, place.label, passed=passed, detail=detail, seconds=seconds, kept=self.kept)
        if passed:
            log.info("restore drill of %s in %s passed in %.1f s", name, place.label, seconds)
        else:
            log.error("restore drill of %s in %s FAILED: %s", name, place.label, detail)
        return passed

    def prune(self, place: Destination) -> None:
        """Remove what retention does not keep; record as gone what is no longer there (pruned
        now, or removed by hand)."""
        try:
            names = place.names()
            dated = [(n, moment) for n in names if (moment := taken_at(n)) is not None]
            keep = to_keep(dated, self.retention, protected=history.latest_good_backup())
            keep |= history.failed_latest(place.label)  # the evidence stays until a person acts
            for name in names:
                if name not in keep:
                    place.delete(name)
                    log.info("backup %s pruned from %s", name, place.label)
            history.mark_gone(place.label, set(names) & keep)
        except (StorageError, OSError) as exc:
            log.error("pruning %s failed: %s", place.label, exc)

    def drill_again(self, place: Destination, newest: str, unlock: Unlock) -> None:
        """Drill the kept backup of ``place`` (other than ``newest``) drilled least recently."""
        try:
            names = [n for n in place.names() if n != newest]
        except (StorageError, OSError) as exc:
            log.error("listing %s failed: %s", place.label, exc)
            return
        if not names:
            return
        drilled = history.last_drilled(place.label)
        never = clock.now() - timedelta(days=36500)
        oldest = min(names, key=lambda n: (drilled.get(n) or never, n))
        self.drill(place, oldest, unlock)


def backup_workers(settings: Settings) -> list[tuple[str, Worker]]:
    """The scheduled backups' worker for `appliance serve` (none when backup_every_hours is 0)."""
    if not settings.backup_every_hours:
        return []
    return [("backups", BackupScheduler(settings).worker())]
