"""activation problems."""
