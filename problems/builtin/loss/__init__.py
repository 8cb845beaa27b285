"""Loss problems: elementwise losses, losses reduced to one number, per-row cross-entropy and log-sum-exp."""
