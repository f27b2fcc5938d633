"""boaf features."""
