"""Migrations of engine.db: modules NNNN_name with up(db)."""
