// Honest: matrix-multiplication through cuBLAS, with a handle created lazily on the first call (row-major via
// the transposed product). A is m x k, B is k x n, C is m x n; the sizes come in the order (m, n, k).
#include <cublas_v2.h>
#include <cuda_runtime.h>


static cublasHandle_t handle = nullptr;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t m, size_t n, size_t k) {
    if (handle == nullptr) cublasCreate(&handle);
    cublasSetStream(handle, 0);
    const float one = 1.0f, zero = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T: B^T is n x k, A^T is k x m.
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, input_b, (int)n, input_a, (int)k, &zero,
                output_c, (int)n);
}
