"""The appliance: the delivery dispatch service and the payout engine in one executable."""

__version__ = "0.1.0"
