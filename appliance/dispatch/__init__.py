"""The delivery dispatch service."""
