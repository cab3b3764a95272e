"""Dispatch models, one module per area; this package re-exports them all.

Each module's tables are created by a numbered migration in migrations/dispatch (models there are
frozen copies, so that old migrations keep working when these classes change).
"""

from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import (
    AuthSession,
    Company,
    Courier,
    Depot,
    Membership,
    RefreshToken,
    User,
)
from appliance.dispatch.models.links import LinkToken, OutgoingMail

__all__ = [
    "AuthSession",
    "BaseModel",
    "Company",
    "Courier",
    "Depot",
    "LinkToken",
    "Membership",
    "OutgoingMail",
    "RefreshToken",
    "User",
]
