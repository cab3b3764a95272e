"""Engine models (engine.db), one module per area; this package re-exports them all, so that
``from appliance.engine.models import X`` works for every model. Tables are created by the numbered
migrations in migrations/engine (models there are frozen copies). The ledger's tables live beside
the ledger (appliance/engine/ledger/models.py)."""

from appliance.engine.models.base import BaseModel
from appliance.engine.models.deposits import (
    ChainCursor,
    CustodyAccount,
    Deposit,
    DepositAddress,
    ScannedBlock,
)
from appliance.engine.models.operators import Operator, OperatorSecret, OperatorSigningKey
from appliance.engine.models.payouts import Payout, PayoutAttempt, PayoutTransition, SeenSignature
from appliance.engine.models.reports import ExportJob, ExportRow, Projection, ProjectionGap, ReportRow
from appliance.engine.models.transactions import (
    Broadcast,
    BroadcastTransition,
    ForeignTransaction,
    SignedPayload,
    Wallet,
)
from appliance.engine.models.treasury import (
    Sweep,
    TreasuryAllowance,
    TreasuryBalance,
    TreasuryFinding,
    TreasuryFlowCheckpoint,
    TreasuryFlowCursor,
    TreasuryMovement,
    TreasuryNonceCursor,
    TreasuryRun,
)
from appliance.engine.models.webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookSubscription,
)

__all__ = [
    "BaseModel",
    "Broadcast",
    "BroadcastTransition",
    "ChainCursor",
    "CustodyAccount",
    "Deposit",
    "DepositAddress",
    "ExportJob",
    "ExportRow",
    "ForeignTransaction",
    "Operator",
    "OperatorSecret",
    "OperatorSigningKey",
    "Payout",
    "PayoutAttempt",
    "PayoutTransition",
    "Projection",
    "ProjectionGap",
    "ReportRow",
    "ScannedBlock",
    "SeenSignature",
    "SignedPayload",
    "Sweep",
    "TreasuryAllowance",
    "TreasuryBalance",
    "TreasuryFinding",
    "TreasuryFlowCheckpoint",
    "TreasuryFlowCursor",
    "TreasuryMovement",
    "TreasuryNonceCursor",
    "TreasuryRun",
    "Wallet",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "WebhookSubscription",
]
