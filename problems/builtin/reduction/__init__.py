"""reduction problems."""
