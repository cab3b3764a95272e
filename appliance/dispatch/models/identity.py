"""Who a caller is: users, companies, memberships, depots, courier profiles and sessions."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel


class Company(BaseModel):
    name = peewee.CharField(max_length=120)
    city = peewee.CharField(max_length=120, default="Yerevan")
    phone = peewee.CharField(max_length=40, null=True)
    plan = peewee.CharField(max_length=16, default="start")
    trial_ends_at = UTCDateTimeField(null=True)
    brand_color = peewee.CharField(max_length=7, default="#1F6FEB")
    logo_url = peewee.CharField(max_length=2000, null=True)
    logo_key = peewee.CharField(max_length=500, null=True)
    sms_sender = peewee.CharField(max_length=11, null=True)
    sms_template = peewee.CharField(max_length=480, null=True)
    support_phone = peewee.CharField(max_length=40, null=True)
    show_courier_phone = peewee.BooleanField(default=False)
    created_at = UTCDateTimeField(default=now)
    # Migration 0023 (issue 45): what imported orders arrive as (ready or draft), and whether the
    # company's integration keys' orders (POST /orders by a shop) arrive ready.
    import_status = peewee.CharField(max_length=8, default="ready")
    integration_orders_ready = peewee.BooleanField(default=False)
    # Migration 0032 (issue 47): the proof every delivery needs unless the order says otherwise
    # (kinds comma-separated, "" none; appliance/dispatch/orders/proof.py).
    proof_required = peewee.CharField(max_length=64, default="")


class User(BaseModel):
    email = peewee.CharField(max_length=320, null=True, unique=True)
    phone = peewee.CharField(max_length=40, null=True)
    display_name = peewee.CharField(max_length=200)
    language = peewee.CharField(max_length=2, default="hy")  # hy, ru, en: e-mails and screens
    password_hash = peewee.CharField(max_length=200, null=True)
    email_confirmed = peewee.BooleanField(default=False)
    last_company = peewee.ForeignKeyField(Company, null=True, on_delete="SET NULL")
    created_at = UTCDateTimeField(default=now)


class Membership(BaseModel):
    user = peewee.ForeignKeyField(User, backref="memberships", on_delete="CASCADE")
    company = peewee.ForeignKeyField(Company, backref="memberships", on_delete="CASCADE")
    role = peewee.CharField(max_length=16)  # owner, dispatcher, courier
    status = peewee.CharField(max_length=16, default="active")  # active, disabled
    # Bumped on a role change or disable: access tokens carry the epoch they were issued in and
    # stop working as soon as it moves on.
    session_epoch = peewee.IntegerField(default=0)
    vehicle = peewee.CharField(max_length=120, null=True)
    joined_at = UTCDateTimeField(default=now)

    class Meta:
        indexes = ((("user", "company"), True),)


class Depot(BaseModel):
    company = peewee.ForeignKeyField(Company, backref="depots", on_delete="CASCADE")
    name = peewee.CharField(max_length=200)
    address = peewee.CharField(max_length=500)
    lat = peewee.DoubleField()
    lon = peewee.DoubleField()
    is_default = peewee.BooleanField(default=False)
    created_at = UTCDateTimeField(default=now)


class Courier(BaseModel):
    company = peewee.ForeignKeyField(Company, backref="couriers", on_delete="CASCADE")
    user = peewee.ForeignKeyField(User, null=True, backref="courier_profiles", on_delete="SET NULL")
    display_name = peewee.CharField(max_length=200)
    phone = peewee.CharField(max_length=40, null=True)
    vehicle_label = peewee.CharField(max_length=120, null=True)
    photo_url = peewee.CharField(max_length=2000, null=True)
    preferred_language = peewee.CharField(max_length=2, default="hy")
    onboarding_completed = peewee.BooleanField(default=False)
    active = peewee.BooleanField(default=True)
    online = peewee.BooleanField(default=False)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        indexes = ((("company", "user"), True),)


class CompanyCredential(BaseModel):
    """A password a company's dispatcher set for a courier (POST /couriers, PATCH /couriers/{id}),
    or the courier put in its place (PATCH /me/password) before proving the address. It signs in
    only to the courier membership of ``company`` and never proves the address; any proof of the
    address drops it (docs/identity.md, *Company-set passwords*). ``email`` is the address the
    dispatcher typed, normalised: the account it signs in may be one made for this company alone
    (an address that already had an account elsewhere keeps that account untouched)."""

    user = peewee.ForeignKeyField(User, backref="company_credentials", on_delete="CASCADE")
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    email = peewee.CharField(max_length=320, index=True)
    password_hash = peewee.CharField(max_length=200)
    set_by = peewee.ForeignKeyField(User, null=True, backref="+", on_delete="SET NULL")
    created_at = UTCDateTimeField(default=now)
    revoked_at = UTCDateTimeField(null=True)
    revoked_reason = peewee.CharField(max_length=40, null=True)


class AuthSession(BaseModel):
    """One sign-in: the family of refresh tokens it rotates through. Revoking it ends the session's
    access tokens too (they carry its id)."""

    id = peewee.CharField(max_length=64, primary_key=True)
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    created_at = UTCDateTimeField(default=now)
    revoked_at = UTCDateTimeField(null=True)
    revoked_reason = peewee.CharField(max_length=40, null=True)
    # The end of its current refresh token: past it, its access tokens are refused too.
    expires_at = UTCDateTimeField(null=True)
    # Set when the session was opened with a company-set password: it acts only in that
    # credential's company and ends when the credential is dropped or replaced.
    credential = peewee.ForeignKeyField(CompanyCredential, null=True, on_delete="CASCADE")


class RefreshToken(BaseModel):
    session = peewee.ForeignKeyField(AuthSession, backref="refresh_tokens", on_delete="CASCADE")
    token_hash = peewee.CharField(max_length=64, unique=True)
    issued_at = UTCDateTimeField(default=now)
    expires_at = UTCDateTimeField()
    rotated_at = UTCDateTimeField(null=True)
