"""matmul problems."""
