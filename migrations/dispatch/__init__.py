"""Migrations of dispatch.db: modules NNNN_name with up(db)."""
