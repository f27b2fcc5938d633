"""boaf search."""
