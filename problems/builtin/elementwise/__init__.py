"""elementwise problems: vector and matrix arithmetic, clamping, transposes, rotary embeddings and fused optimizer
steps, each touching every element a fixed number of times (memory-bound)."""
