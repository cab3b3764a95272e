"""Dispatch models, one module per area; this package re-exports them all.

Each module's tables are created by a numbered migration in migrations/dispatch (models there are
frozen copies, so that old migrations keep working when these classes change).
"""

from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.fees import FeeZone, ShopRemittance
from appliance.dispatch.models.fiscal import FiscalReceipt, FiscalSettings
from appliance.dispatch.models.identity import (
    AuthSession,
    Company,
    CompanyCredential,
    Courier,
    Depot,
    Membership,
    RefreshToken,
    User,
)
from appliance.dispatch.models.integrations import (
    CompanyWebhook,
    IntegrationKey,
    WebhookDelivery,
    WebhookMessage,
)
from appliance.dispatch.models.links import InviteRecord, JobLease, LinkToken, OutgoingMail
from appliance.dispatch.models.messages import RecipientLink, RecipientMessage, RecipientSettings
from appliance.dispatch.models.orders import (
    Assignment,
    BulkRequest,
    Collection,
    CourierLocation,
    Order,
    OrderEvent,
    RealtimeEvent,
    Settlement,
    Shift,
    StatusRequest,
)
from appliance.dispatch.models.pay import PayRule
from appliance.dispatch.models.tracking import Rating, TrackingLink

__all__ = [
    "Assignment",
    "AuthSession",
    "BaseModel",
    "BulkRequest",
    "Collection",
    "Company",
    "CompanyCredential",
    "CompanyWebhook",
    "Courier",
    "CourierLocation",
    "Depot",
    "FeeZone",
    "FiscalReceipt",
    "FiscalSettings",
    "IntegrationKey",
    "InviteRecord",
    "JobLease",
    "LinkToken",
    "Membership",
    "Order",
    "OrderEvent",
    "OutgoingMail",
    "PayRule",
    "Rating",
    "RealtimeEvent",
    "RecipientLink",
    "RecipientMessage",
    "RecipientSettings",
    "RefreshToken",
    "Settlement",
    "Shift",
    "ShopRemittance",
    "StatusRequest",
    "TrackingLink",
    "User",
    "WebhookDelivery",
    "WebhookMessage",
]
