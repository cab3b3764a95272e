"""The engine service's audit log (appliance/common/audit.py; migration 0025)."""

from appliance.common.audit import AuditAnchorFields, AuditEntryFields
from appliance.engine.models.base import BaseModel


class AuditEntry(BaseModel, AuditEntryFields):
    class Meta:
        table_name = "audit_entry"


class AuditAnchor(BaseModel, AuditAnchorFields):
    class Meta:
        table_name = "audit_anchor"
