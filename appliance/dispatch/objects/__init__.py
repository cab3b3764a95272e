"""Signed-link access to the object store (logos, proof photos)."""
