"""What both services use and nothing service-specific."""
