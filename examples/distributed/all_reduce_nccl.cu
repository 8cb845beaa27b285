// A correct all-reduce in CUDA: one ncclAllReduce on the harness's communicator, on the default stream.
#include <cuda_runtime.h>
#include <nccl.h>

extern "C" void solution(const float* d_input, float* d_output, size_t n, int rank, int world_size,
                         ncclComm_t comm, void* const* peer_buffers, size_t symmetric_bytes) {
    ncclAllReduce(d_input, d_output, n, ncclFloat, ncclSum, comm, 0);
}
