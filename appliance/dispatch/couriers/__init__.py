"""Couriers: profiles, shifts, locations, earnings (dispatcher side and shared helpers)."""
