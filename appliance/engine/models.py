"""Engine models (engine.db). Tables are created by migrations/engine."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.db import database


class BaseModel(peewee.Model):
    class Meta:
        database = database
        legacy_table_names = False


class Operator(BaseModel):
    id = peewee.CharField(max_length=64, primary_key=True)
    created_at = UTCDateTimeField(default=now)


class OperatorSecret(BaseModel):
    id = peewee.CharField(max_length=64, primary_key=True)
    operator = peewee.ForeignKeyField(Operator, backref="secrets", on_delete="CASCADE")
    ciphertext = peewee.BlobField()
    created_at = UTCDateTimeField(default=now)


class Payout(BaseModel):
    """One payout instruction of one operator; the pipeline drives ``status`` through
    appliance.engine.payouts.state.transition, never directly."""

    # No index of its own: the unique (operator, idempotency_key) index serves lookups by operator.
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT", index=False)
    payout_id = peewee.CharField(max_length=64)
    idempotency_key = peewee.CharField(max_length=128)
    instruction_hash = peewee.CharField(max_length=64)
    asset = peewee.CharField(max_length=16)
    chain_id = peewee.CharField(max_length=32)
    amount_minor = peewee.CharField(max_length=39)  # decimal string of minor units, never a float
    destination = peewee.CharField(max_length=256)
    status = peewee.CharField(max_length=16)
    tx_hash = peewee.CharField(max_length=130, null=True)
    reason = peewee.CharField(max_length=500, null=True)
    # Broadcast reservation: the digest of the signed transaction, fixed before any broadcast so
    # that a retry after a crash re-sends the same transaction instead of signing a new one.
    signed_payload_digest = peewee.CharField(max_length=130, null=True)
    created_at = UTCDateTimeField(default=now)
    updated_at = UTCDateTimeField(default=now)
    # The pipeline's work lease (appliance.common.jobs) and the gas cost once mined, in the fee asset.
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    next_attempt_at = UTCDateTimeField(null=True)
    work_attempts = peewee.IntegerField(default=0)
    fee_minor = peewee.CharField(max_length=78, null=True)

    class Meta:
        table_name = "payout"


class PayoutTransition(BaseModel):
    payout = peewee.ForeignKeyField(Payout, backref="transitions", on_delete="RESTRICT")
    from_status = peewee.CharField(max_length=16, null=True)
    to_status = peewee.CharField(max_length=16)
    occurred_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "payout_transition"


class PayoutAttempt(BaseModel):
    payout = peewee.ForeignKeyField(Payout, backref="attempts", on_delete="RESTRICT")
    outcome = peewee.CharField(max_length=32)
    tx_hash = peewee.CharField(max_length=130, null=True)
    occurred_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "payout_attempt"


class SeenSignature(BaseModel):
    signature = peewee.CharField(max_length=64, primary_key=True)
    expires_at = peewee.BigIntegerField()

    class Meta:
        table_name = "seen_signature"


class Wallet(BaseModel):
    """A custody wallet on one chain with the next nonce the engine will reserve. A wallet with a
    ``fence_reason`` signs nothing (the chain used a nonce the engine cannot account for);
    ``verified_block`` is a head at which the chain's nonce was known to match the engine's;
    ``scan_block`` is the next block of the wallet's history to read while a nonce gap is being
    matched against the chain (NULL: no scan under way)."""

    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    next_nonce = peewee.BigIntegerField(default=0)
    fence_reason = peewee.TextField(null=True)
    verified_block = peewee.BigIntegerField(null=True)
    scan_block = peewee.BigIntegerField(null=True)

    class Meta:
        table_name = "wallet"


class Broadcast(BaseModel):
    """One nonce reservation (wallet, nonce): the transaction that pays one payout (or tops up the
    payout wallet's gas from the fee wallet). ``raw`` is the payload in force; every payload ever
    signed at this nonce is a SignedPayload, because any of them may still land."""

    payout = peewee.ForeignKeyField(
        Payout, null=True, unique=True, backref="broadcasts", on_delete="RESTRICT"
    )
    purpose = peewee.CharField(max_length=16)  # payout | gas_topup | sweep | sweep_topup
    chain_id = peewee.CharField(max_length=32)
    wallet = peewee.CharField(max_length=42)
    nonce = peewee.BigIntegerField()
    raw = peewee.TextField()
    digest = peewee.CharField(max_length=80)  # "sha256:" and 64 hex digits
    tx_hash = peewee.CharField(max_length=66)
    max_fee_per_gas = peewee.CharField(max_length=78)
    max_priority_fee_per_gas = peewee.CharField(max_length=78)
    gas_limit = peewee.BigIntegerField()
    status = peewee.CharField(max_length=16)  # signed | sent | mined | final: outgoing.state
    mined_tx_hash = peewee.CharField(max_length=66, null=True)
    mined_block = peewee.BigIntegerField(null=True)
    mined_block_hash = peewee.CharField(max_length=66, null=True)
    fee_minor = peewee.CharField(max_length=78, null=True)
    signed_block = peewee.BigIntegerField(null=True)  # the head when it was signed (or found)
    created_at = UTCDateTimeField(default=now)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "broadcast"


class BroadcastTransition(BaseModel):
    """One move of a broadcast's status (outgoing.state.transition), written with the move."""

    broadcast = peewee.ForeignKeyField(Broadcast, backref="transitions", on_delete="RESTRICT")
    from_status = peewee.CharField(max_length=16, null=True)
    to_status = peewee.CharField(max_length=16)
    occurred_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "broadcast_transition"


class SignedPayload(BaseModel):
    broadcast = peewee.ForeignKeyField(Broadcast, backref="payloads", on_delete="RESTRICT")
    tx_hash = peewee.CharField(max_length=66)
    digest = peewee.CharField(max_length=80)  # "sha256:" and 64 hex digits
    raw = peewee.TextField()
    max_fee_per_gas = peewee.CharField(max_length=78)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "signed_payload"


class CustodyAccount(BaseModel):
    """An operator's BIP44 account number (deposit addresses) and its next address index."""

    operator = peewee.ForeignKeyField(Operator, unique=True, on_delete="RESTRICT")
    account = peewee.IntegerField(unique=True)
    next_index = peewee.BigIntegerField(default=0)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "custody_account"


class DepositAddress(BaseModel):
    """An operator's deposit address on one chain: m/44'/60'/(1 + custody account)'/0/derivation_index."""

    address_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    account_ref = peewee.CharField(max_length=128)
    address = peewee.CharField(max_length=42)
    custody_account = peewee.IntegerField()
    derivation_index = peewee.BigIntegerField()
    watch_from = peewee.BigIntegerField()  # the chain's head when it was created: deposits start there
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "deposit_address"


class Deposit(BaseModel):
    """One transfer to a deposit address, recorded once: (chain_id, tx_hash, output_index), the
    output index being the log index of an ERC20 Transfer and 0 for a native transfer."""

    transfer_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    address = peewee.ForeignKeyField(DepositAddress, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    tx_hash = peewee.CharField(max_length=66)
    output_index = peewee.IntegerField()
    asset_code = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=78)
    block_height = peewee.BigIntegerField()
    block_hash = peewee.CharField(max_length=66)
    status = peewee.CharField(max_length=16)  # PENDING, CONFIRMED, RETRACTED
    detected_at = UTCDateTimeField(default=now)
    confirmed_at = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "deposit"


class ChainCursor(BaseModel):
    """The deposit watcher's position on one chain, and its single-holder lease."""

    chain_id = peewee.CharField(max_length=32, primary_key=True)
    next_block = peewee.BigIntegerField()
    holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    lease_until = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "chain_cursor"


class ScannedBlock(BaseModel):
    """The hash of each recently scanned block: a different hash at that height now is a reorg."""

    chain_id = peewee.CharField(max_length=32)
    number = peewee.BigIntegerField()
    hash = peewee.CharField(max_length=66)

    class Meta:
        table_name = "scanned_block"
        primary_key = peewee.CompositeKey("chain_id", "number")


class WebhookEvent(BaseModel):
    """An event for an operator, written in the transaction of the change it announces (outbox)."""

    event_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    event_type = peewee.CharField(max_length=64)
    payload = peewee.TextField()
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_event"


class WebhookEndpoint(BaseModel):
    """An operator's receiver URL with its signing secret (encrypted under appliance.key)."""

    endpoint_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    url = peewee.CharField(max_length=2048)
    secret = peewee.BlobField()
    active = peewee.BooleanField(default=True)
    failing_since = UTCDateTimeField(null=True)
    disabled_at = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_endpoint"


class WebhookSubscription(BaseModel):
    """The spec's subscription: one event type delivered to one endpoint."""

    subscription_id = peewee.CharField(max_length=64, unique=True)
    endpoint = peewee.ForeignKeyField(WebhookEndpoint, backref="subscriptions", on_delete="RESTRICT")
    event_type = peewee.CharField(max_length=64)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_subscription"


class WebhookDelivery(BaseModel):
    """One event to one endpoint, retried until delivered or given up (status failed)."""

    event = peewee.ForeignKeyField(WebhookEvent, on_delete="RESTRICT")
    endpoint = peewee.ForeignKeyField(WebhookEndpoint, on_delete="RESTRICT")
    status = peewee.CharField(max_length=16, default="queued")
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    last_error = peewee.CharField(max_length=500, null=True)
    delivered_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_delivery"


class ReportRow(BaseModel):
    """One projection row: an operator's totals of one report type for one asset and UTC day.
    Totals are decimal strings (sums of amounts up to 39 digits exceed every integer column)."""

    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    report_type = peewee.CharField(max_length=16)
    asset_code = peewee.CharField(max_length=16)
    period = peewee.CharField(max_length=10)  # YYYY-MM-DD (UTC), or "all" for SUMMARY
    count = peewee.BigIntegerField()
    total_amount = peewee.CharField(max_length=90)
    total_fee = peewee.CharField(max_length=90)
    as_of = UTCDateTimeField(default=now)

    class Meta:
        table_name = "report_row"


class Projection(BaseModel):
    """A projection's cursor over the event log (webhook_event ids) and its single-holder lease."""

    name = peewee.CharField(max_length=32, primary_key=True)
    last_event_id = peewee.BigIntegerField(default=0)
    built_through = UTCDateTimeField(null=True)
    holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    lease_until = UTCDateTimeField(null=True)

    class Meta:
        table_name = "projection"


class ProjectionGap(BaseModel):
    """An event id below a projection's cursor that was not visible when the cursor passed it (on
    PostgreSQL ids are taken at insert, not commit): applied once it appears, dropped after
    a timeout (a rolled-back transaction's id never appears)."""

    name = peewee.CharField(max_length=32)
    event_id = peewee.BigIntegerField()
    seen_at = UTCDateTimeField()

    class Meta:
        table_name = "projection_gap"
        primary_key = peewee.CompositeKey("name", "event_id")


class ExportJob(BaseModel):
    job_id = peewee.CharField(max_length=64)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    report_type = peewee.CharField(max_length=16)
    asset_code = peewee.CharField(max_length=16)
    from_time = UTCDateTimeField()
    to_time = UTCDateTimeField()
    request_hash = peewee.CharField(max_length=64)
    status = peewee.CharField(max_length=16, default="PENDING")  # PENDING, COMPLETE, FAILED
    row_count = peewee.BigIntegerField(null=True)
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    last_error = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField(default=now)
    completed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "export_job"


class ExportRow(BaseModel):
    """A completed job's snapshot: every download streams exactly these rows, in seq order."""

    job = peewee.ForeignKeyField(ExportJob, on_delete="CASCADE")
    seq = peewee.BigIntegerField()
    period = peewee.CharField(max_length=10)
    asset_code = peewee.CharField(max_length=16)
    count = peewee.BigIntegerField()
    total_amount = peewee.CharField(max_length=90)
    total_fee = peewee.CharField(max_length=90)
    as_of = peewee.CharField(max_length=32)  # the wire form, fixed at the snapshot

    class Meta:
        table_name = "export_row"
        primary_key = peewee.CompositeKey("job", "seq")


class TreasuryFinding(BaseModel):
    """A finding of the reconciliation (appliance/engine/treasury/reconcile.py). Findings read from
    the current state are replaced by every run; a ``sticky`` one (an unknown outflow: the chain
    keeps the nonce, the money is gone) stays until an administrator acknowledges it."""

    key = peewee.CharField(max_length=255, unique=True)
    kind = peewee.CharField(max_length=32)
    critical = peewee.BooleanField()
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    address = peewee.CharField(max_length=42)
    expected_minor = peewee.CharField(max_length=90)
    actual_minor = peewee.CharField(max_length=90)
    detail = peewee.TextField()
    sticky = peewee.BooleanField(default=False)
    first_seen_at = UTCDateTimeField(default=now)
    last_seen_at = UTCDateTimeField(default=now)
    acknowledged_at = UTCDateTimeField(null=True)
    acknowledged_by = peewee.CharField(max_length=200, null=True)

    class Meta:
        table_name = "treasury_finding"


class TreasuryBalance(BaseModel):
    """A custody wallet's balance of one asset as the last reconciliation read it (for /metrics)."""

    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    role = peewee.CharField(max_length=16)
    address = peewee.CharField(max_length=42)
    on_chain_minor = peewee.CharField(max_length=90)
    expected_minor = peewee.CharField(max_length=90)
    low_balance = peewee.BooleanField(default=False)
    checked_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "treasury_balance"
        primary_key = peewee.CompositeKey("chain_id", "asset_code", "role", "address")


class TreasuryRun(BaseModel):
    """The reconcile job's single-holder lease, its last run and when it is due again."""

    name = peewee.CharField(max_length=32, primary_key=True)
    holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    lease_until = UTCDateTimeField(null=True)
    checked_at = UTCDateTimeField(null=True)
    next_run_at = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)

    class Meta:
        table_name = "treasury_run"


class Sweep(BaseModel):
    """One sweep of one asset from a deposit address into the payout wallet (appliance/engine/
    sweeps/). ``status``: skipped (below the minimum: nothing moved), topping_up (the fee wallet's
    gas top-up of the address is in flight), signed, sent, completed, failed. Deposits of the
    address and asset confirmed before ``planned_at`` are covered by it. ``topup`` and
    ``broadcast`` are the two nonce reservations (fee wallet, deposit address)."""

    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    deposit_address = peewee.ForeignKeyField(DepositAddress, on_delete="RESTRICT")
    address = peewee.CharField(max_length=42)
    status = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=90, null=True)  # what the payload in force moves
    fee_minor = peewee.CharField(max_length=90, null=True)  # the sweep's network fee, once mined
    topup_minor = peewee.CharField(max_length=90, null=True)
    topup = peewee.ForeignKeyField(Broadcast, null=True, unique=True, on_delete="RESTRICT", backref="+")
    broadcast = peewee.ForeignKeyField(
        Broadcast, null=True, unique=True, on_delete="RESTRICT", backref="sweeps"
    )
    tx_hash = peewee.CharField(max_length=66, null=True)
    reason = peewee.CharField(max_length=500, null=True)
    planned_at = UTCDateTimeField()
    created_at = UTCDateTimeField(default=now)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "sweep"
