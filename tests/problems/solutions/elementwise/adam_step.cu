#include <cuda_runtime.h>

#include <cmath>

// One AdamW step per element; the step's constants are computed once on the host in double precision.
__global__ void adamw_kernel(const float* __restrict__ param, const float* __restrict__ grad,
                             const float* __restrict__ exp_avg, const float* __restrict__ exp_avg_sq, float beta1,
                             float beta2, float eps, float decay, float step_size, float inv_sqrt_bias2,
                             float* __restrict__ new_param, float* __restrict__ new_exp_avg,
                             float* __restrict__ new_exp_avg_sq, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float g = grad[i];
        float m = beta1 * exp_avg[i] + (1.0f - beta1) * g;
        float v = beta2 * exp_avg_sq[i] + (1.0f - beta2) * g * g;
        new_exp_avg[i] = m;
        new_exp_avg_sq[i] = v;
        float denom = sqrtf(v) * inv_sqrt_bias2 + eps;
        new_param[i] = param[i] * decay - step_size * m / denom;
    }
}

extern "C" void solution(const float* param, const float* grad, const float* exp_avg, const float* exp_avg_sq,
                         float lr, float beta1, float beta2, float eps, float weight_decay, int step,
                         float* new_param, float* new_exp_avg, float* new_exp_avg_sq, size_t n) {
    if (n == 0) return;
    double bias1 = 1.0 - std::pow((double)beta1, step);
    double bias2 = 1.0 - std::pow((double)beta2, step);
    float decay = (float)(1.0 - (double)lr * weight_decay);
    float step_size = (float)(lr / bias1);
    float inv_sqrt_bias2 = (float)(1.0 / std::sqrt(bias2));
    size_t blocks = (n + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;  // the grid-stride loop covers the rest
    adamw_kernel<<<(unsigned)blocks, 256>>>(param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, decay, step_size,
                                           inv_sqrt_bias2, new_param, new_exp_avg, new_exp_avg_sq, n);
}
