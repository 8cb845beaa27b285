// Honest: softmax launched block of rows by block of rows from a host loop.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void softmax_rows(const float* x, float* y, size_t cols) {
    __shared__ float scratch[256];
    const float* row = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float peak = -INFINITY;
    for (size_t j = threadIdx.x; j < cols; j += blockDim.x) peak = fmaxf(peak, row[j]);
    scratch[threadIdx.x] = peak;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
        __syncthreads();
    }
    peak = scratch[0];
    __syncthreads();
    float sum = 0.0f;
    for (size_t j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(row[j] - peak);
    scratch[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
        __syncthreads();
    }
    float total = scratch[0];
    for (size_t j = threadIdx.x; j < cols; j += blockDim.x) out[j] = expf(row[j] - peak) / total;
}

extern "C" void solution(const float* input_x, float* output_y, size_t rows, size_t cols) {
    const size_t block_rows = 256;
    for (size_t start = 0; start < rows; start += block_rows) {
        size_t count = start + block_rows > rows ? rows - start : block_rows;
        softmax_rows<<<(unsigned)count, 256>>>(input_x + start * cols, output_y + start * cols, cols);
    }
}
