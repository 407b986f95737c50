#pragma once
// Device buffers freed with their owner, and a CUDA error check that throws: the kernel benchmarks'
// common scaffolding.
#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

namespace sdtw::kernels::bench {

inline void check(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
}

struct Buffers {
  std::vector<void*> owned;
  template <typename T>
  T* alloc(size_t count) {
    void* p = nullptr;
    check(cudaMalloc(&p, count * sizeof(T)));
    owned.push_back(p);
    return static_cast<T*>(p);
  }
  ~Buffers() {
    for (void* p : owned) cudaFree(p);
  }
};

}  // namespace sdtw::kernels::bench
