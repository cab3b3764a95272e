"""Operators, their API secrets (migrations/engine 0001) and the Ed25519 keys they sign payout
instructions with (0019)."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel


class Operator(BaseModel):
    id = peewee.CharField(max_length=64, primary_key=True)
    created_at = UTCDateTimeField(default=now)


class OperatorSecret(BaseModel):
    id = peewee.CharField(max_length=64, primary_key=True)
    operator = peewee.ForeignKeyField(Operator, backref="secrets", on_delete="CASCADE")
    ciphertext = peewee.BlobField()
    created_at = UTCDateTimeField(default=now)


class OperatorSigningKey(BaseModel):
    """An operator's Ed25519 public key for payout instructions (appliance/engine/instructions.py):
    while one is in force (not revoked) every payout of the operator carries a valid signature."""

    operator = peewee.ForeignKeyField(Operator, on_delete="CASCADE", index=False)
    public_key = peewee.CharField(max_length=64)
    created_at = UTCDateTimeField(default=now)
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "operator_signing_key"
