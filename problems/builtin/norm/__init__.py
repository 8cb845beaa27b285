"""Normalization problems: batch, layer, group, RMS (plain and fused with a residual add), L1, L2 and Frobenius."""
