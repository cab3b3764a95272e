"""Numbered, forward-only migrations of both services (see appliance/common/migrate.py)."""
