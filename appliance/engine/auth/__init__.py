"""Signed-request authentication and operator secrets."""
