"""The built-in distributed problems, one module each: the four collectives and the two GEMMs fused with one."""
