"""lower-trig-matmul: C = A · B for lower triangular N×N matrices."""

from __future__ import annotations

from problems.builtin.matmul._triangular import TriangularMatmul


class LowerTrigMatmul(TriangularMatmul):
    slug = "lower-trig-matmul"
    title = "Lower Triangular Matrix Multiplication"
    description = (
        "Multiply two lower triangular N×N matrices (every element above the diagonal is zero): "
        "`output_c = input_a @ input_b`. The product is lower triangular too, so "
        "`output_c[i][j] = sum(input_a[i][k] * input_b[k][j] for j <= k <= i)` on and below the diagonal; write "
        "zeros above it (the output buffer starts as garbage). Row-major, contiguous; N need not be a multiple of "
        "anything."
    )
    lower = True
