"""attention problems: scaled dot-product attention in its full, causal, grouped-query and decode forms."""
