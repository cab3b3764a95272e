"""Sweeps: confirmed deposits move from the deposit addresses to the payout wallet
(docs/engine-treasury.md, Sweeps)."""
