// Broken: applies weight decay as Adam's L2 term (added to the gradient) instead of AdamW's decoupled decay.
#include <cuda_runtime.h>

#include <cmath>

__global__ void adam_kernel(const float* __restrict__ param, const float* __restrict__ grad,
                            const float* __restrict__ exp_avg, const float* __restrict__ exp_avg_sq, float beta1,
                            float beta2, float eps, float weight_decay, float step_size, float inv_sqrt_bias2,
                            float* __restrict__ new_param, float* __restrict__ new_exp_avg,
                            float* __restrict__ new_exp_avg_sq, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float p = param[i];
        float g = grad[i] + weight_decay * p;
        float m = beta1 * exp_avg[i] + (1.0f - beta1) * g;
        float v = beta2 * exp_avg_sq[i] + (1.0f - beta2) * g * g;
        new_exp_avg[i] = m;
        new_exp_avg_sq[i] = v;
        new_param[i] = p - step_size * m / (sqrtf(v) * inv_sqrt_bias2 + eps);
    }
}

extern "C" void solution(const float* param, const float* grad, const float* exp_avg, const float* exp_avg_sq,
                         float lr, float beta1, float beta2, float eps, float weight_decay, int step,
                         float* new_param, float* new_exp_avg, float* new_exp_avg_sq, size_t n) {
    if (n == 0) return;
    double bias1 = 1.0 - std::pow((double)beta1, step);
    double bias2 = 1.0 - std::pow((double)beta2, step);
    size_t blocks = (n + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    adam_kernel<<<(unsigned)blocks, 256>>>(param, grad, exp_avg, exp_avg_sq, beta1, beta2, eps, weight_decay,
                                          (float)(lr / bias1), (float)(1.0 / std::sqrt(bias2)), new_param,
                                          new_exp_avg, new_exp_avg_sq, n);
}
