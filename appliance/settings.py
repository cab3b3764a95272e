"""One frozen Settings value, read once: defaults < appliance.toml < APPLIANCE_* environment < flags.

Every setting has a type; a value that does not convert, or a key that names no setting, stops
start-up with a one-line SettingsError that names it. Nothing else in the code reads the
environment or the settings file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_type_hints

ENV_PREFIX = "APPLIANCE_"
SETTINGS_FILE = "appliance.toml"
# APPLIANCE_* variables that are not settings: APPLIANCE_DEBUG asks the command line for tracebacks
# (appliance/cli/_errors.py), read before any setting is.
# Read by the commands themselves, not settings. APPLIANCE_SIGNER_KEEPER is `serve` telling itself,
# across the exec that clears the custody secrets from its memory, which process keeps its signer
# (appliance/engine/signer/keeper.py).
NOT_SETTINGS = frozenset({"APPLIANCE_DEBUG", "APPLIANCE_ADMIN_PASSWORD", "APPLIANCE_SIGNER_KEEPER"})
# Settings refused in appliance.toml: a passphrase written beside the key it opens protects nothing
# (APPLIANCE_BACKUP_PASSPHRASE is read by `backup` and `restore` too, and by `serve`'s scheduled
# backups as the setting backup_passphrase).
NOT_IN_SETTINGS_FILE = frozenset({"custody_passphrase", "backup_passphrase"})
DEFAULT_LOCAL_RPC_GAS_CAP = 5_000_000
BLOCK_GAS_LIMIT = 30_000_000  # eth_local's (appliance/engine/chain/local.py GAS_LIMIT)


class SettingsError(Exception):
    """A setting that cannot be used; the message is one line and names the setting."""


@dataclasses.dataclass(frozen=True)
class AssetConfig:
    """One asset of a configured chain (the spec's Asset entry)."""

    code: str
    kind: str  # "native" or "ERC20"
    decimals: int
    confirmations: int
    contract: str | None = None
    # The payout wallet (and, for the native asset, the fee wallet) below this many minor units
    # raises the treasury's low-balance alarm (None: no alarm). docs/engine-treasury.md
    low_balance_minor: int | None = None
    # A deposit address's confirmed balance of this asset is swept into the payout wallet only
    # above this many minor units (None: only when it is more than the sweep's own network fee).
    # docs/engine-treasury.md, Sweeps
    sweep_min_minor: int | None = None


@dataclasses.dataclass(frozen=True)
class ChainConfig:
    """A chain reached through an Ethereum JSON-RPC node (``[[chains]]`` in appliance.toml)."""

    id: str
    rpc_url: str
    network_id: int
    environment: str
    assets: tuple[AssetConfig, ...]
    # The most a payout or gas top-up may offer per unit of gas, in wei (None: no ceiling).
    max_fee_per_gas: int | None = None


@dataclasses.dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("data")
    # Databases: empty means SQLite in the data directory; postgresql://… switches the service.
    dispatch_database: str = ""
    engine_database: str = ""
    sqlite_busy_timeout_ms: int = 10000
    # `serve` checkpoints each SQLite write-ahead log in the background this often, so that no
    # request's commit does it; 0 leaves it to SQLite (in the commit that passes 1000 pages).
    sqlite_checkpoint_seconds: float = 1.0
    # The `disk` readiness check fails when the data directory's filesystem has less free space than
    # this, before SQLite itself runs out (docs/operations.md, Storage faults, says why 128).
    min_free_disk_mb: int = 128
    # …or, when larger, what this many minutes of writes would take at the rate the free space
    # fell over the last ten minutes (common/disk_floor.py); 0 keeps the fixed floor alone.
    disk_headroom_minutes: int = 30

    # Serving
    host: str = "127.0.0.1"
    dispatch_port: int = 8080
    engine_port: int = 8081
    public_url: str = ""
    # Behind a reverse proxy: the proxy's address ("*" for any) whose X-Forwarded-For/-Proto/-Host
    # are believed, and how many proxies are in the chain. Empty: those headers are dropped.
    trusted_proxy: str = ""
    trusted_proxy_count: int = 1
    threads: int = 100
    # Slow or greedy clients (docs/operations.md, Slow clients): connections one client address may
    # hold per serving process (0: no bound; not applied behind trusted_proxy, where every
    # connection comes from the proxy), and how long a request may take to arrive before it must
    # keep up at least 8 KB/s.
    connections_per_client: int = 200
    request_read_seconds: float = 30.0
    # Serving processes on the same ports: 0 means one per CPU core and one more (docs/operations.md).
    processes: int = 0
    # With several serving processes: one whose listener loops have not turned for
    # heartbeat_seconds is out of rotation until they do; one silent for replace_after_seconds
    # is killed and replaced (docs/operations.md, Serving processes).
    heartbeat_seconds: float = 5.0
    replace_after_seconds: float = 30.0
    shutdown_grace_seconds: float = 10.0
    log_level: str = "INFO"
    log_format: str = "text"  # text, or json: one JSON object per line (docs/operations.md, Logs)
    # GET /metrics on each port: loopback (default: local clients only), open, or off; a request
    # with "Authorization: Bearer <metrics_token>" is answered from anywhere when a token is set.
    metrics: str = "loopback"
    metrics_token: str = ""

    # Identity (dispatch)
    access_token_seconds: int = 900
    refresh_token_days: int = 30
    session_max_days: int = 90
    rate_limits: str = "on"
    rate_limit_public: str = "120 per minute"
    rate_limit_storage: str = "memory://"

    # Email
    smtp_url: str = ""
    smtp_ca_file: str = ""  # extra CA certificates for the SMTP server (beside the system store)
    mail_from: str = "Appliance <no-reply@appliance.local>"

    # Object storage: empty means objects/ in the data directory; an https URL means S3-compatible.
    s3_endpoint: str = ""
    s3_bucket: str = ""
    s3_access_key: str = ""
    s3_secret_key: str = ""
    s3_region: str = "us-east-1"
    presigned_url_seconds: int = 300
    max_upload_bytes: int = 15 * 1024 * 1024  # a phone camera photo is 3..12 MB

    # Road routing: "embedded" uses the OSRM data built into the data directory;
    # "osrm" or "valhalla" with routing_url use a server.
    routing_engine: str = "embedded"
    routing_url: str = ""
    straight_line_detour: float = 1.4
    straight_line_speed_kmh: float = 25.0

    # Route solver
    solver_time_limit_seconds: float = 2.0
    solver_first_strategy: str = "PARALLEL_CHEAPEST_INSERTION"

    # Map tiles: empty means the MBTiles file built into the data directory.
    tiles_url: str = ""

    # Tracking and events
    tracking_ttl_hours: int = 72
    # Housekeeping (a leased job inside `serve`): retention, shifts left open, stale GPS for ETAs.
    gps_retention_days: int = 90
    # Audit log entries older than this are removed (0: kept for ever); docs/operations.md, Audit log.
    audit_retention_days: int = 730
    event_retention_days: int = 7
    shift_auto_end_hour: int = 4  # Yerevan local hour at which shifts still open end; -1: never
    eta_max_fix_minutes: int = 30  # an older GPS fix is not an ETA's origin (the depot is, and says so)
    housekeeping_minutes: int = 10
    event_stream_seconds: int = 300
    event_stream_max: int = 64

    # Engine
    local_block_seconds: float = 1.0
    # The embedded chain eth_local (networkId 1337, ETH and USDC); off when only remote chains are used.
    local_chain: bool = True
    local_confirmations: int = 2
    # eth_local answers standard Ethereum JSON-RPC on 127.0.0.1 at this port (0: off), for a
    # wallet or `cast` to look at the demo's money (docs/engine-payouts.md, Looking with standard tools).
    local_rpc_port: int = 0
    # The most gas an eth_call or eth_estimateGas of that port runs with: py-evm runs about 3 M gas
    # a second of a core, and the block's 30 M held a serving process's core for 10-13 s.
    local_rpc_gas_cap: int = DEFAULT_LOCAL_RPC_GAS_CAP
    # Chains reached through JSON-RPC: [[chains]] tables in appliance.toml, or APPLIANCE_CHAINS as a
    # JSON list of the same tables.
    chains: tuple[ChainConfig, ...] = ()
    payout_worker_seconds: float = 0.5
    webhook_ca_file: str = ""
    webhook_allow_private: bool = False
    # Dispatch companies' SMPP providers on loopback or private addresses (development, tests, a
    # provider inside the deployment's own network): refused by default like webhook receivers.
    smpp_allow_private: bool = False
    # Dispatch companies' e-HDM service (fiscal receipts) on loopback or private addresses (tests,
    # a test server inside the deployment's network): refused by default like webhook receivers.
    ehdm_allow_private: bool = False
    signature_window_seconds: int = 60
    custody_key: str = dataclasses.field(default="", repr=False)
    # The passphrase custody.key is encrypted under (age): given in the environment
    # (APPLIANCE_CUSTODY_PASSPHRASE) or in a file named here (systemd's LoadCredential= fits), never
    # in appliance.toml; without either, commands run on a terminal ask for it (docs/engine-treasury.md).
    custody_passphrase: str = dataclasses.field(default="", repr=False)
    custody_passphrase_file: str = ""
    # `serve` reconciles the custody wallets with the chains this often (a leased job: one process
    # of the deployment at a time); 0 turns the job off. docs/engine-treasury.md
    reconcile_interval_seconds: int = 300
    # `serve` sweeps confirmed deposits into the payout wallet this often (a leased job); 0 turns
    # sweeps off (deposits then stay at their addresses). docs/engine-treasury.md, Sweeps
    sweep_interval_seconds: int = 5
    # The most one gas transfer from the fee wallet (to the payout wallet, or to a deposit address
    # before a token sweep) may carry: the signer refuses more (docs/engine-treasury.md, The signer).
    signer_gas_cap_wei: int = 10**18
    # An external signer (`appliance signer`, run as its own OS user: docs/security.md, Deployments):
    # the path of its socket. Empty: `serve` starts its own signer at signer.sock in the data
    # directory. Set: `serve` starts none and its engine asks the one listening there.
    signer_socket: str = ""
    # `appliance signer` with this group: its socket is 0660 in that group, whose members (the
    # serving side's user) are the only other users who can connect. Empty: 0600, its own user only.
    signer_socket_group: str = ""
    # The database URL the signer reads its facts from (payout rows, operators' controls; on
    # PostgreSQL, a role of its own that may only read: docs/security.md, Deployments). Empty: the
    # engine's own (engine_database).
    signer_engine_database: str = ""

    # Scheduled backups (docs/operations.md, Scheduled backups and restore drills): every
    # backup_every_hours (0: off; a fraction for less than an hour, 0.25 is every 15 minutes) one
    # process of the deployment takes an encrypted backup into backup_to_dir and/or the bucket
    # backup_s3_bucket, restores it in a drill, and prunes beyond the backup_keep_* counts.
    backup_every_hours: float = 0.0
    backup_to_dir: str = ""
    backup_s3_bucket: str = ""
    backup_s3_prefix: str = "appliance-backups/"
    # The bucket's server and credentials: empty means the s3_* settings' (the objects' server).
    backup_s3_endpoint: str = ""
    backup_s3_access_key: str = ""
    backup_s3_secret_key: str = dataclasses.field(default="", repr=False)
    backup_s3_region: str = ""
    # What the backups are encrypted under: APPLIANCE_BACKUP_PASSPHRASE (never in appliance.toml)
    # or the file named here (systemd's LoadCredential= fits).
    backup_passphrase: str = dataclasses.field(default="", repr=False)
    backup_passphrase_file: str = ""
    # Retention: the newest backup_keep_last, and the newest backup of each of the last N hours,
    # days and ISO weeks that have one; the newest backup whose drill passed is never pruned.
    backup_keep_last: int = 3
    backup_keep_hourly: int = 24
    backup_keep_daily: int = 7
    backup_keep_weekly: int = 4
    # How many backup runs and drill results are kept in the dispatch database's history.
    backup_history_kept: int = 100

    @property
    def dispatch_db_url(self) -> str:
        return self.dispatch_database or f"sqlite:///{self.data_dir / 'dispatch.db'}"

    @property
    def engine_db_url(self) -> str:
        return self.engine_database or f"sqlite:///{self.data_dir / 'engine.db'}"

    @property
    def dispatch_public_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.dispatch_port}").rstrip("/")

    @property
    def serving_process_count(self) -> int:
        """How many serving processes `serve` starts: the setting, or one per usable core and one
        more. A process's threads take turns on one interpreter lock, so a process uses about one
        core; the one more keeps the cores busy while a process waits for SQLite's write lock
        (measured: docs/operations.md, Serving processes)."""
        if self.processes:
            return self.processes
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return (cores or 1) + 1

    @property
    def rate_limits_enabled(self) -> bool:
        return self.rate_limits.lower() not in {"off", "0", "false", "no"}

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


# memory:// counts per process; Redis (the redis client is pinned) shares the counts between
# processes and hosts.
RATE_LIMIT_STORAGES = ("memory://", "redis://", "rediss://", "redis+unix://")

_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
_TYPES = get_type_hints(Settings)
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


# The deepest confirmations a chain's asset may ask: the deposit watcher keeps the hashes of that many
# blocks and walks them for reorgs, so a larger number is refused rather than silently not honoured.
MAX_CONFIRMATIONS = 10_000
_CHAIN_KEYS = {"id", "rpc_url", "network_id", "environment", "assets", "max_fee_per_gas"}
_ASSET_KEYS = {
    "code",
    "kind",
    "decimals",
    "confirmations",
    "contract",
    "low_balance_minor",
    "sweep_min_minor",
}


def _chains(value: Any, source: str) -> tuple[ChainConfig, ...]:
    """[[chains]] tables: every key known, every value of its type, ids unique."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError:
            raise SettingsError(f"setting chains from {source}: not a JSON list of chain tables") from None
    if not isinstance(value, list):
        raise SettingsError(f"setting chains from {source}: must be a list of chain tables")
    chains: list[ChainConfig] = []
    for position, table in enumerate(value):
        where = f"setting chains[{position}] from {source}"
        if not isinstance(table, dict) or set(table) - _CHAIN_KEYS:
            unknown = sorted(set(table) - _CHAIN_KEYS) if isinstance(table, dict) else table
            raise SettingsError(f"{where}: unknown keys {unknown}")
        try:
            chain_id = str(table["id"])
            rpc_url = str(table["rpc_url"])
            network_id = int(table["network_id"])
            environment = str(table.get("environment", "mainnet"))
            ceiling = table.get("max_fee_per_gas")
            max_fee_per_gas = None if ceiling is None else int(str(ceiling))
            if max_fee_per_gas is not None and max_fee_per_gas < 1:
                raise SettingsError(f"{where}: max_fee_per_gas must be a positive number of wei")
            assets = []
            for asset in table.get("assets", []):
                if not isinstance(asset, dict) or set(asset) - _ASSET_KEYS:
                    raise SettingsError(f"{where}: an asset table has unknown keys")
                kind = str(asset.get("kind", "native"))
                contract = asset.get("contract")
                if kind not in {"native", "ERC20"} or (kind == "ERC20") != bool(contract):
                    raise SettingsError(f"{where}: asset kind must be native, or ERC20 with a contract")
                if contract and not re.fullmatch(r"0x[0-9a-fA-F]{40}", str(contract)):
                    raise SettingsError(f"{where}: an asset's contract must be 0x and 40 hex digits")
                assets.append(
                    AssetConfig(
                        code=str(asset["code"]),
                        kind=kind,
                        decimals=int(asset["decimals"]),
                        confirmations=int(asset.get("confirmations", 12)),
                        contract=str(contract) if contract else None,
                        low_balance_minor=_minor(asset.get("low_balance_minor"), where),
                        sweep_min_minor=_minor(asset.get("sweep_min_minor"), where, "sweep_min_minor"),
                    )
                )
        except (KeyError, TypeError, ValueError) as exc:
            raise SettingsError(f"{where}: missing or malformed {exc}") from None
        if not re.fullmatch(r"[A-Za-z0-9_]{3,32}", chain_id) or chain_id == "eth_local":
            raise SettingsError(f"{where}: id must be 3..32 letters, digits or _ (and not eth_local)")
        if not rpc_url.startswith(("http://", "https://")):
            raise SettingsError(f"{where}: rpc_url must be an http(s) JSON-RPC URL")
        if any(not re.fullmatch(r"[A-Z0-9]{2,16}", a.code) or a.confirmations < 1 for a in assets):
            raise SettingsError(f"{where}: asset codes are 2..16 of A-Z0-9, confirmations at least 1")
        for asset_position, a in enumerate(assets):
            if a.confirmations > MAX_CONFIRMATIONS:
                raise SettingsError(
                    f"setting chains[{position}].assets[{asset_position}].confirmations from {source}: "
                    f"{a.confirmations} is more than the {MAX_CONFIRMATIONS} blocks the deposit watcher "
                    "checks for reorgs (docs/engine-deposits.md)"
                )
        chains.append(ChainConfig(chain_id, rpc_url, network_id, environment, tuple(assets), max_fee_per_gas))
    if len({c.id for c in chains}) != len(chains):
        raise SettingsError(f"setting chains from {source}: two chains share an id")
    return tuple(chains)


def _minor(value: Any, where: str, name: str = "low_balance_minor") -> int | None:
    """An amount of minor units: an integer or a decimal string of digits (never a float)."""
    if value is None:
        return None
    if isinstance(value, bool) or not re.fullmatch(r"[0-9]{1,78}", str(value)) or isinstance(value, float):
        raise SettingsError(f"{where}: {name} must be a whole number of minor units")
    return int(str(value))


def _convert(name: str, value: Any, source: str) -> Any:
    if name == "chains":
        return _chains(value, source)
    kind = _TYPES[name]
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValueError
        if kind is int:
            if isinstance(value, bool):
                raise ValueError
            return int(value)
        if kind is float:
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if kind is Path:
            return Path(str(value))
        if not isinstance(value, str | int | float):
            raise ValueError
        return str(value)
    except (TypeError, ValueError):
        raise SettingsError(
            f"setting {name} from {source}: {value!r} is not a valid {kind.__name__}"
        ) from None


def absolute_path(value: str | os.PathLike[str]) -> Path:
    """``value`` made absolute against the current directory (``~`` expanded, ``..`` folded);
    symbolic links are kept as given."""
    return Path(os.path.abspath(os.path.expanduser(os.fspath(value))))


# Settings that name a file: made absolute when read, like the data directory.
PATH_SETTINGS = (
    "smtp_ca_file",
    "webhook_ca_file",
    "custody_passphrase_file",
    "backup_to_dir",
    "backup_passphrase_file",
    "signer_socket",
)


def _absolute_paths(values: Mapping[str, Any]) -> dict[str, Any]:
    changed: dict[str, Any] = {
        name: str(absolute_path(values[name])) for name in PATH_SETTINGS if values.get(name)
    }
    for name in ("dispatch_database", "engine_database", "signer_engine_database"):
        url = values.get(name) or ""
        # sqlite:///relative.db is relative to the current directory; sqlite:////abs.db is absolute.
        if url.startswith("sqlite:///") and not url.startswith("sqlite:////"):
            changed[name] = "sqlite:///" + str(absolute_path(url.removeprefix("sqlite:///")))
    return changed


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Build the one Settings value. ``overrides`` are command-line flags (None means not given)."""
    environ = os.environ if environ is None else environ
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    values: dict[str, Any] = {}

    # Absolute from here on: builds run tools in their own folders, and `serve` may be started from
    # anywhere, so nothing below may depend on the directory the command was started from.
    data_dir = absolute_path(flags.get("data_dir") or environ.get(ENV_PREFIX + "DATA_DIR") or "data")
    toml_path = data_dir / SETTINGS_FILE
    if toml_path.is_file():
        try:
            table = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{toml_path}: {exc}") from None
        for key, value in table.items():
            name = key.replace("-", "_")
            if name not in _FIELDS or name == "data_dir":
                raise SettingsError(f"{toml_path}: unknown setting {key!r}")
            if name in NOT_IN_SETTINGS_FILE:
                raise SettingsError(
                    f"{toml_path}: {key} is not kept in the settings file, beside the key it opens: "
                    f"give APPLIANCE_{name.upper()} or {name}_file"
                )
            values[name] = _convert(name, value, str(toml_path))

    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or key in NOT_SETTINGS:
            continue
        name = key[len(ENV_PREFIX) :].lower()
        if name not in _FIELDS:
            raise SettingsError(f"unknown setting in environment: {key}")
        values[name] = _convert(name, value, key)

    for name, value in flags.items():
        if name not in _FIELDS:
            raise SettingsError(f"unknown setting {name!r}")
        values[name] = _convert(name, value, "--" + name.replace("_", "-"))

    values["data_dir"] = data_dir
    values.update(_absolute_paths(values))
    settings = Settings(**values)
    _check(settings)
    return settings


def _check(settings: Settings) -> None:
    for port_name in ("dispatch_port", "engine_port", "local_rpc_port"):
        port = getattr(settings, port_name)
        if not 0 <= port <= 65535:
            raise SettingsError(f"setting {port_name}: {port} is not a port number")
    for url_name in ("dispatch_database", "engine_database", "signer_engine_database"):
        url = getattr(settings, url_name)
        if url and not url.startswith(("postgresql://", "postgres://", "sqlite:///")):
            raise SettingsError(f"setting {url_name}: only postgresql:// or sqlite:/// URLs are supported")
    if settings.s3_endpoint and not (
        settings.s3_bucket and settings.s3_access_key and settings.s3_secret_key
    ):
        raise SettingsError("settings s3_bucket, s3_access_key and s3_secret_key: required with s3_endpoint")
    if settings.session_max_days < 0:
        raise SettingsError("setting session_max_days: 0 (no absolute limit) or more days")
    if settings.routing_engine not in {"embedded", "osrm", "valhalla", "none"}:
        raise SettingsError("setting routing_engine: must be embedded, osrm, valhalla or none")
    if settings.routing_engine in {"osrm", "valhalla"} and not settings.routing_url:
        raise SettingsError(f"setting routing_url: required when routing_engine is {settings.routing_engine}")
    if not 21_000 <= settings.local_rpc_gas_cap <= BLOCK_GAS_LIMIT:
        raise SettingsError(f"setting local_rpc_gas_cap: 21000 to {BLOCK_GAS_LIMIT} (the block's gas limit)")
    if not 1 <= settings.local_confirmations <= MAX_CONFIRMATIONS:
        raise SettingsError(f"setting local_confirmations: 1 to {MAX_CONFIRMATIONS}")
    if not 0 <= settings.processes <= 64:
        raise SettingsError("setting processes: 0 (one per core and one more) to 64")
    if not 0 <= settings.sqlite_checkpoint_seconds <= 60:
        raise SettingsError("setting sqlite_checkpoint_seconds: 0 (SQLite's own) to 60")
    if not 0 <= settings.min_free_disk_mb <= 1024 * 1024:
        raise SettingsError("setting min_free_disk_mb: 0 (no floor) to 1048576")
    if not 0 <= settings.disk_headroom_minutes <= 1440:
        raise SettingsError("setting disk_headroom_minutes: 0 (the fixed floor alone) to 1440")
    if not 2 <= settings.heartbeat_seconds <= 600:
        raise SettingsError("setting heartbeat_seconds: 2 to 600")
    if not settings.heartbeat_seconds < settings.replace_after_seconds <= 3600:
        raise SettingsError("setting replace_after_seconds: above heartbeat_seconds, at most 3600")
    if settings.threads < 4:
        raise SettingsError("setting threads: at least 4")
    if not 0 <= settings.connections_per_client <= 1000:
        raise SettingsError("setting connections_per_client: 0 (no bound) to 1000")
    if not (settings.reconcile_interval_seconds == 0 or 10 <= settings.reconcile_interval_seconds <= 86400):
        raise SettingsError("setting reconcile_interval_seconds: 0 (off) or 10 to 86400")
    if not 0 <= settings.sweep_interval_seconds <= 3600:
        raise SettingsError("setting sweep_interval_seconds: 0 (off) or 1 to 3600")
    if not 0 <= settings.audit_retention_days <= 36500:
        raise SettingsError("setting audit_retention_days: 0 (kept for ever) to 36500")
    if not 0 <= settings.signer_gas_cap_wei < 2**63:
        raise SettingsError("setting signer_gas_cap_wei: 0 to 2^63 - 1 (wei)")
    if not 1 <= settings.request_read_seconds <= 3600:
        raise SettingsError("setting request_read_seconds: 1 to 3600")
    if not settings.rate_limit_storage.startswith(RATE_LIMIT_STORAGES):
        raise SettingsError(
            "setting rate_limit_storage: must be memory:// or a Redis URL (redis://, rediss://, redis+unix://)"
        )
    if settings.log_format not in {"text", "json"}:
        raise SettingsError("setting log_format: must be text or json")
    if settings.metrics not in {"loopback", "open", "off"}:
        raise SettingsError("setting metrics: must be loopback, open or off")
    if settings.log_level.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise SettingsError("setting log_level: must be DEBUG, INFO, WARNING or ERROR")
    _check_backups(settings)


# The shortest schedule (tests run one of a few seconds; a real one is hours).
MIN_BACKUP_SECONDS = 5


def _check_backups(settings: Settings) -> None:
    hours = settings.backup_every_hours
    if not (hours == 0 or MIN_BACKUP_SECONDS / 3600 <= hours <= 24 * 366):
        raise SettingsError(f"setting backup_every_hours: 0 (off) or {MIN_BACKUP_SECONDS} seconds to a year")
    for name in ("backup_keep_last", "backup_keep_hourly", "backup_keep_daily", "backup_keep_weekly"):
        if not 0 <= getattr(settings, name) <= 10_000:
            raise SettingsError(f"setting {name}: 0 to 10000")
    if settings.backup_keep_last < 1:
        raise SettingsError("setting backup_keep_last: at least 1 (the newest backup is always kept)")
    if not 1 <= settings.backup_history_kept <= 100_000:
        raise SettingsError("setting backup_history_kept: 1 to 100000")
    if settings.backup_s3_bucket:
        endpoint = settings.backup_s3_endpoint or settings.s3_endpoint
        access = settings.backup_s3_access_key or settings.s3_access_key
        secret = settings.backup_s3_secret_key or settings.s3_secret_key
        if not (endpoint and access and secret):
            raise SettingsError(
                "setting backup_s3_bucket: needs backup_s3_endpoint, backup_s3_access_key and "
                "backup_s3_secret_key (or the s3_* ones)"
            )
    if hours and not (settings.backup_to_dir or settings.backup_s3_bucket):
        raise SettingsError("setting backup_every_hours: give backup_to_dir or backup_s3_bucket (or both)")
