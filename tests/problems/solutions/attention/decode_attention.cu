// Split-K decode attention in float32: one block per (sequence, head). Its 8 warps take turns over 32-key tiles of
// the valid cache rows, each keeping an online softmax; the block then merges the 8 partial results.
#include <cuda_runtime.h>
#include <math.h>

#define WARPS 8
#define TK 32

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__global__ void decode_kernel(const float* __restrict__ q, const float* __restrict__ kc, const float* __restrict__ vc,
                              const int* __restrict__ lengths, float* __restrict__ out, size_t h, size_t cap,
                              size_t d, float scale) {
    extern __shared__ float smem[];
    float* qs = smem;               // [d], pre-scaled query
    float* acc = qs + d;            // [WARPS][d], unnormalised partial outputs
    float* ps = acc + WARPS * d;    // [WARPS][TK]
    float* ms = ps + WARPS * TK;    // [WARPS] running max of each warp
    float* ls = ms + WARPS;         // [WARPS] running sum of each warp

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t bh = blockIdx.x;
    const size_t b = bh / h;
    int len = lengths[b];
    const size_t n = len < 1 ? 1 : ((size_t)len > cap ? cap : (size_t)len);
    const float* kh = kc + bh * cap * d;
    const float* vh = vc + bh * cap * d;

    for (size_t c = threadIdx.x; c < d; c += blockDim.x) qs[c] = q[bh * d + c] * scale;
    float* my_acc = acc + warp * d;
    for (size_t c = lane; c < d; c += 32) my_acc[c] = 0.0f;
    __syncthreads();

    float m = -INFINITY, l = 0.0f;
    for (size_t j0 = (size_t)warp * TK; j0 < n; j0 += (size_t)WARPS * TK) {
        // Scores of the tile: the warp reduces one key's dot product at a time, lanes splitting the head dimension.
        float my_score = -INFINITY;
        for (int t = 0; t < TK; ++t) {
            size_t j = j0 + t;
            if (j >= n) break;
            float part = 0.0f;
            for (size_t c = lane; c < d; c += 32) part += qs[c] * kh[j * d + c];
            part = warp_sum(part);
            if (lane == t) my_score = part;
        }
        bool seen = j0 + lane < n;
        float m_new = fmaxf(m, warp_max(my_score));
        float p = seen ? expf(my_score - m_new) : 0.0f;
        float corr = expf(m - m_new);
        l = l * corr + warp_sum(p);
        ps[warp * TK + lane] = p;
        __syncwarp();
        size_t count = n - j0 < TK ? n - j0 : TK;
        for (size_t c = lane; c < d; c += 32) {
            float a = my_acc[c] * corr;
            for (size_t t = 0; t < count; ++t) a += ps[warp * TK + t] * vh[(j0 + t) * d + c];
            my_acc[c] = a;
        }
        __syncwarp();
        m = m_new;
    }
    if (lane == 0) {
        ms[warp] = m;
        ls[warp] = l;
    }
    __syncthreads();

    // Merge: rescale each warp's partial sums to the block's max. Warps that saw no key have m = -inf, weight 0.
    float big = -INFINITY;
    for (int w = 0; w < WARPS; ++w) big = fmaxf(big, ms[w]);
    float total = 0.0f;
    for (int w = 0; w < WARPS; ++w) total += ls[w] * expf(ms[w] - big);
    for (size_t c = threadIdx.x; c < d; c += blockDim.x) {
        float sum = 0.0f;
        for (int w = 0; w < WARPS; ++w) sum += acc[w * d + c] * expf(ms[w] - big);
        out[bh * d + c] = sum / total;
    }
}

extern "C" void solution(const float* Q, const float* K_cache, const float* V_cache, const int* lengths, float* output,
                         size_t B, size_t H, size_t L, size_t D) {
    size_t smem = (D + WARPS * D + WARPS * TK + 2 * WARPS) * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(decode_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    decode_kernel<<<(unsigned)(B * H), WARPS * 32, smem>>>(Q, K_cache, V_cache, lengths, output, H, L, D,
                                                           1.0f / sqrtf((float)D));
}
