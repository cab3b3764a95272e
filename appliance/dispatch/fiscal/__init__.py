"""Fiscal receipts through e-HDM, the State Revenue Committee's electronic cash register (issue 47;
docs/fiscal-receipts.md)."""
