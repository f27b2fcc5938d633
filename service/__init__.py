"""boaf service."""
