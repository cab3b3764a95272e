"""The payout engine."""
