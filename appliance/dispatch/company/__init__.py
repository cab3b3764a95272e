"""Company settings, depots, billing and logo."""
