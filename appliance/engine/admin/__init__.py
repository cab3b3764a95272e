"""The engine administrator's console under /admin/ on the engine's port (docs/engine-admin.md)."""
