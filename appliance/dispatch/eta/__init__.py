"""Arrival estimates of a courier's run."""
