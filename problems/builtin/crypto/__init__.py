"""crypto problems: modular arithmetic over prime fields (finite-field vectors and polynomials, curve points)."""
