"""The GPU runner: compiles, verifies and times submissions. `runner.api` holds the wire models."""
