"""upper-trig-matmul: C = A · B for upper triangular N×N matrices."""

from __future__ import annotations

from problems.builtin.matmul._triangular import TriangularMatmul


class UpperTrigMatmul(TriangularMatmul):
    slug = "upper-trig-matmul"
    title = "Upper Triangular Matrix Multiplication"
    description = (
        "Multiply two upper triangular N×N matrices (every element below the diagonal is zero): "
        "`output_c = input_a @ input_b`. The product is upper triangular too, so "
        "`output_c[i][j] = sum(input_a[i][k] * input_b[k][j] for i <= k <= j)` on and above the diagonal; write "
        "zeros below it (the output buffer starts as garbage). Row-major, contiguous; N need not be a multiple of "
        "anything."
    )
    lower = False
