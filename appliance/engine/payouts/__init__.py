"""Payout instructions: idempotent submission, detail and listing."""
