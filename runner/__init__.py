"""The GPU runner: compiles, verifies and times submissions. `contract.wire` holds the wire models."""
