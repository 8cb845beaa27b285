// A 16×16 output tile per block: the (16+k-1)² input patch goes to shared memory (zeros outside the image), each
// thread sums its k×k window there and divides by the number of window pixels inside the image.
#include <cuda_runtime.h>

#define TILE 16

__global__ void box_blur_kernel(const float* __restrict__ in, float* __restrict__ out, size_t h, size_t w, int k) {
    extern __shared__ float patch[];
    const int p = TILE + k - 1, r = k / 2;
    const long long y0 = (long long)blockIdx.y * TILE - r, x0 = (long long)blockIdx.x * TILE - r;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    for (int i = tid; i < p * p; i += TILE * TILE) {
        long long y = y0 + i / p, x = x0 + i % p;
        patch[i] = (y >= 0 && y < (long long)h && x >= 0 && x < (long long)w) ? in[(size_t)y * w + (size_t)x] : 0.0f;
    }
    __syncthreads();
    const long long y = (long long)blockIdx.y * TILE + threadIdx.y, x = (long long)blockIdx.x * TILE + threadIdx.x;
    if (y >= (long long)h || x >= (long long)w) return;
    float sum = 0.0f;
    for (int i = 0; i < k; ++i) {
        const float* row = patch + (threadIdx.y + i) * p + threadIdx.x;
        for (int j = 0; j < k; ++j) sum += row[j];
    }
    // The clipped window's extent along each axis.
    long long rows = min(y + r, (long long)h - 1) - max(y - r, 0LL) + 1;
    long long cols = min(x + r, (long long)w - 1) - max(x - r, 0LL) + 1;
    out[(size_t)y * w + (size_t)x] = sum / (float)(rows * cols);
}

extern "C" void solution(const float* input_image, int kernel_size, float* output_image, size_t height, size_t width) {
    if (height == 0 || width == 0) return;
    size_t p = TILE + (size_t)kernel_size - 1;
    size_t smem = p * p * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(box_blur_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((width + TILE - 1) / TILE), (unsigned)((height + TILE - 1) / TILE));
    box_blur_kernel<<<grid, block, smem>>>(input_image, output_image, height, width, kernel_size);
}
