"""signer.db: the signer's own state, beside the custody key in the data directory (mode 0600).

Only the party that holds the key opens it: the signer process, or LocalSigner in a command that
signs in its own process (`appliance payout cancel`), and the administrator's commands when no
signer runs (appliance/engine/signer/admin.py). The serving processes never do: nothing in it is
believed from the engine database, which they can write.

Its schema is the signer's own, created and migrated here (stdlib sqlite3, no engine migration):
``schema_version`` holds one row, the version applied; each version's statements run once, in one
transaction. Version 1:

- ``policy (section, subject, name, value)``: the policy values in force (own_policy.py);
- ``pending (…, effective_at)``: loosenings waiting for the policy's delay;
- ``approval (operator, payout_id, …)``: payouts an administrator approved in the signer;
- ``signed_payout (operator, payout_id, …)``: each payout the signer signed, once, with its amount,
  wallet, network and nonce: the rolling 24 h volume is counted from it, and a payout is never
  signed at a second nonce;
- ``journal (seq, wallet, network_id, nonce, entry)`` and ``journal_head``: the append-only,
  hash-chained journal of every signature (journal.py); triggers refuse UPDATE and DELETE;
- ``last_nonce (wallet, network_id, nonce)``: the highest nonce signed per wallet and network.

The administrator token (``signer-admin.token``, 0600, beside the key) is made here on first open.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

SIGNER_DB = "signer.db"
ADMIN_TOKEN_FILE = "signer-admin.token"
BUSY_TIMEOUT_SECONDS = 10.0

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # version 1
        """CREATE TABLE policy (
            section TEXT NOT NULL, subject TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
            changed_at TEXT NOT NULL, PRIMARY KEY (section, subject, name))""",
        """CREATE TABLE pending (
            id INTEGER PRIMARY KEY, section TEXT NOT NULL, subject TEXT NOT NULL, name TEXT NOT NULL,
            value TEXT, requested_at TEXT NOT NULL, effective_at TEXT NOT NULL)""",
        """CREATE TABLE approval (
            operator TEXT NOT NULL, payout_id TEXT NOT NULL, approved_by TEXT NOT NULL,
            approved_at TEXT NOT NULL, PRIMARY KEY (operator, payout_id))""",
        """CREATE TABLE signed_payout (
            operator TEXT NOT NULL, payout_id TEXT NOT NULL, chain_id TEXT NOT NULL, asset TEXT NOT NULL,
            amount_minor TEXT NOT NULL, wallet TEXT NOT NULL, network_id INTEGER NOT NULL,
            nonce INTEGER NOT NULL, signed_at TEXT NOT NULL, PRIMARY KEY (operator, payout_id))""",
        "CREATE INDEX signed_payout_volume ON signed_payout (operator, chain_id, asset, signed_at)",
        """CREATE TABLE journal (
            seq INTEGER PRIMARY KEY, wallet TEXT NOT NULL, network_id INTEGER NOT NULL,
            nonce INTEGER NOT NULL, entry TEXT NOT NULL)""",
        "CREATE INDEX journal_nonce ON journal (wallet, network_id, nonce)",
        """CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal
            BEGIN SELECT RAISE(ABORT, 'the signer journal is append-only'); END""",
        """CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
            BEGIN SELECT RAISE(ABORT, 'the signer journal is append-only'); END""",
        """CREATE TABLE journal_head (
            id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL)""",
        """CREATE TABLE last_nonce (
            wallet TEXT NOT NULL, network_id INTEGER NOT NULL, nonce INTEGER NOT NULL,
            PRIMARY KEY (wallet, network_id))""",
    ),
)


def stamp(moment: datetime) -> str:
    """A time as signer.db stores it: UTC, fixed width, so that text order is time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def db_path(data_dir: Path) -> Path:
    return Path(data_dir) / SIGNER_DB


def token_path(data_dir: Path) -> Path:
    return Path(data_dir) / ADMIN_TOKEN_FILE


class SignerStore:
    """One connection to signer.db, shared by the signer's threads in turn (a lock); across
    processes SQLite's own locking serialises writers (BEGIN IMMEDIATE)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        previous = os.umask(0o077)  # the file (and SQLite's journal beside it) owner-only from birth
        try:
            self._db = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
            )
        finally:
            os.umask(previous)
        os.chmod(self.path, 0o600)
        self._lock = threading.RLock()
        self._migrate()

    def _migrate(self) -> None:
        with self.write_transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM schema_version").fetchone()
            version = 0 if row is None else int(row[0])
            if version > len(MIGRATIONS):
                raise RuntimeError(
                    f"{self.path} has schema version {version}; this signer knows {len(MIGRATIONS)}"
                )
            for statements in MIGRATIONS[version:]:
                for statement in statements:
                    db.execute(statement)
            if row is None:
                db.execute("INSERT INTO schema_version (version) VALUES (?)", (len(MIGRATIONS),))
            else:
                db.execute("UPDATE schema_version SET version = ?", (len(MIGRATIONS),))

    @contextlib.contextmanager
    def write_transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: a second signer process waits for this one)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_store(data_dir: Path) -> SignerStore:
    """signer.db of the data directory (created on first use), and the administrator token."""
    ensure_admin_token(data_dir)
    return SignerStore(db_path(data_dir))


def ensure_admin_token(data_dir: Path) -> str:
    """The administrator token, made (random, 0600) when there is none yet."""
    path = token_path(data_dir)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_admin_token(data_dir)
    with os.fdopen(fd, "w") as out:
        token = secrets.token_urlsafe(32)
        out.write(token + "\n")
    return token


def read_admin_token(data_dir: Path) -> str:
    return token_path(data_dir).read_text().strip()


def token_matches(given: object, expected: str) -> bool:
    """Compared in constant time; anything but a non-empty string is no token."""
    if not isinstance(given, str) or not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())
