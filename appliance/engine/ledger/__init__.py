"""Per-operator double-entry ledger and spending controls (docs/engine-treasury.md)."""
