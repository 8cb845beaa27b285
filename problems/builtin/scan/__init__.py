"""scan problems."""
