// A tiled GEMM against an out×in weight (rows of W loaded transposed into shared memory, so global reads stay
// coalesced), with bias, Swish and the scale in the epilogue.
#include <cuda_runtime.h>

#define TILE 32

__global__ void matmul_swish_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                    const float* __restrict__ bias, float scale, float* __restrict__ out,
                                    size_t rows, size_t inner, size_t cols) {
    __shared__ float xs[TILE][TILE + 1];
    __shared__ float ws[TILE][TILE + 1];  // ws[kk][j] = W[col0 + j][t + kk]
    const size_t row0 = blockIdx.y * (size_t)TILE, col0 = blockIdx.x * (size_t)TILE;
    const size_t row = row0 + threadIdx.y, col = col0 + threadIdx.x;
    const size_t wrow = col0 + threadIdx.y;
    float acc = 0.0f;
    for (size_t t = 0; t < inner; t += TILE) {
        const size_t kk = t + threadIdx.x;
        xs[threadIdx.y][threadIdx.x] = (row < rows && kk < inner) ? x[row * inner + kk] : 0.0f;
        ws[threadIdx.x][threadIdx.y] = (wrow < cols && kk < inner) ? w[wrow * inner + kk] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += xs[threadIdx.y][i] * ws[i][threadIdx.x];
        __syncthreads();
    }
    if (row < rows && col < cols) {
        const float z = acc + bias[col];
        out[row * cols + col] = scale * z / (1.0f + expf(-z));
    }
}

extern "C" void solution(const float* input_matrix, const float* weight_matrix, const float* bias,
                         float scaling_factor, float* output, size_t batch_size, size_t in_features,
                         size_t out_features) {
    if (batch_size == 0 || out_features == 0) return;
    const dim3 grid((unsigned)((out_features + TILE - 1) / TILE), (unsigned)((batch_size + TILE - 1) / TILE));
    matmul_swish_kernel<<<grid, dim3(TILE, TILE)>>>(input_matrix, weight_matrix, bias, scaling_factor, output,
                                                    batch_size, in_features, out_features);
}
