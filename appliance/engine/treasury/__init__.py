"""Deployment-global reads that operators may not see."""
