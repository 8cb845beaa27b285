"""quantization problems: the OCP microscaling formats (MXFP4, MXFP8) and NVFP4, quantize, dequantize and GEMM."""
