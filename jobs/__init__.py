"""boaf jobs."""
