// Repeated squaring with a tiled GEMM: about log2(n) products. Work buffers come from the stream-ordered
// allocator on the default stream, so nothing waits on the host.
#include <cuda_runtime.h>

#define TILE 32

__global__ void square_gemm_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                   size_t n) {
    __shared__ float as[TILE][TILE + 1];
    __shared__ float bs[TILE][TILE + 1];
    const size_t row = blockIdx.y * (size_t)TILE + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)TILE + threadIdx.x;
    float acc = 0.0f;
    for (size_t t = 0; t < n; t += TILE) {
        const size_t ak = t + threadIdx.x, bk = t + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < n && ak < n) ? a[row * n + ak] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (bk < n && col < n) ? b[bk * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}

static void gemm(const float* a, const float* b, float* c, size_t n) {
    const unsigned tiles = (unsigned)((n + TILE - 1) / TILE);
    square_gemm_kernel<<<dim3(tiles, tiles), dim3(TILE, TILE)>>>(a, b, c, n);
}

extern "C" void solution(const float* input_matrix, size_t n, float* output_matrix, size_t size) {
    if (size == 0) return;
    const size_t bytes = size * size * sizeof(float);
    if (n <= 1) {
        cudaMemcpyAsync(output_matrix, input_matrix, bytes, cudaMemcpyDeviceToDevice, 0);
        return;
    }
    float* squares[2] = {nullptr, nullptr};
    float* spare = nullptr;
    cudaMallocAsync(reinterpret_cast<void**>(&squares[0]), bytes, 0);
    cudaMallocAsync(reinterpret_cast<void**>(&squares[1]), bytes, 0);
    cudaMallocAsync(reinterpret_cast<void**>(&spare), bytes, 0);

    const float* base = input_matrix;  // A^(2^i)
    float* result = nullptr;           // the product of the powers taken so far: output_matrix or spare
    int next_square = 0;
    for (size_t p = n; p != 0;) {
        if (p & 1) {
            if (result == nullptr) {
                cudaMemcpyAsync(output_matrix, base, bytes, cudaMemcpyDeviceToDevice, 0);
                result = output_matrix;
            } else {
                float* dst = result == output_matrix ? spare : output_matrix;
                gemm(result, base, dst, size);
                result = dst;
            }
        }
        p >>= 1;
        if (p != 0) {
            float* dst = squares[next_square];
            next_square ^= 1;
            gemm(base, base, dst, size);
            base = dst;
        }
    }
    if (result != output_matrix) cudaMemcpyAsync(output_matrix, result, bytes, cudaMemcpyDeviceToDevice, 0);
    cudaFreeAsync(squares[0], 0);
    cudaFreeAsync(squares[1], 0);
    cudaFreeAsync(spare, 0);
}
