"""The nonce fencing moved to appliance.engine.outgoing.fencing (issue 42): it serves every
transaction the engine sends. Kept for appliance/common/backup.py, which reads CHECKPOINTS from
here; it goes when backup moves to the application level (issue 42's last step)."""

from appliance.engine.outgoing.fencing import CHECKPOINTS

__all__ = ["CHECKPOINTS"]
