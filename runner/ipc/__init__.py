"""Between the judge and the launcher: the socket channel, the shared buffers, and the typed messages."""
