"""boaf models."""
