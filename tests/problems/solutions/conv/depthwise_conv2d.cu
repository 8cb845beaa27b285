// conv-2d's tiling per channel: a 16×16 output tile per block, the channel's zero-padded input patch and its own
// K×K kernel in shared memory. grid.z walks the channels (in strides of 65535 if there were more).
#include <cuda_runtime.h>

#define TILE 16

__global__ void depthwise_kernel(const float* __restrict__ in, const float* __restrict__ kern, float* __restrict__ out,
                                 size_t channels, size_t h, size_t w, int k) {
    extern __shared__ float smem[];
    const int p = TILE + k - 1;
    float* taps = smem;
    float* patch = smem + k * k;
    const long long y0 = (long long)blockIdx.y * TILE - k / 2, x0 = (long long)blockIdx.x * TILE - k / 2;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    const size_t y = (size_t)blockIdx.y * TILE + threadIdx.y, x = (size_t)blockIdx.x * TILE + threadIdx.x;
    for (size_t ch = blockIdx.z; ch < channels; ch += gridDim.z) {
        const float* plane = in + ch * h * w;
        for (int i = tid; i < k * k; i += TILE * TILE) taps[i] = kern[ch * k * k + i];
        for (int i = tid; i < p * p; i += TILE * TILE) {
            long long yy = y0 + i / p, xx = x0 + i % p;
            bool inside = yy >= 0 && yy < (long long)h && xx >= 0 && xx < (long long)w;
            patch[i] = inside ? plane[(size_t)yy * w + (size_t)xx] : 0.0f;
        }
        __syncthreads();
        if (y < h && x < w) {
            float acc = 0.0f;
            for (int i = 0; i < k; ++i) {
                const float* row = patch + (threadIdx.y + i) * p + threadIdx.x;
                for (int j = 0; j < k; ++j) acc += row[j] * taps[i * k + j];
            }
            out[(ch * h + y) * w + x] = acc;
        }
        __syncthreads();
    }
}

extern "C" void solution(const float* input, const float* kernel, float* output, size_t C, size_t H, size_t W,
                         size_t K) {
    if (C == 0 || H == 0 || W == 0) return;
    size_t smem = (K * K + (TILE + K - 1) * (TILE + K - 1)) * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(depthwise_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((W + TILE - 1) / TILE), (unsigned)((H + TILE - 1) / TILE), (unsigned)(C < 65535 ? C : 65535));
    depthwise_kernel<<<grid, block, smem>>>(input, kernel, output, C, H, W, (int)K);
}
