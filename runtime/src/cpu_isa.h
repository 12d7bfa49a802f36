//===- cpu_isa.h - the widest vector ISA the host runs --------------------===//
//
// The runtime's hand-vectorized kernels (the GEMV of onednn/matmul.cpp, the
// Winograd weight transform) each come in AVX-512, AVX2+FMA and generic
// builds; this picks one for the host, once per kernel.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_CPU_ISA_H
#define PADDLE_RUNTIME_CPU_ISA_H

namespace paddle::runtime {

/// The one of `avx512`, `avx2` (AVX2 with FMA) and `generic` the host CPU
/// runs, preferring the widest.
template <typename Kernel>
Kernel widestKernel(Kernel avx512, Kernel avx2, Kernel generic) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return avx2;
  return generic;
}

} // namespace paddle::runtime

#endif // PADDLE_RUNTIME_CPU_ISA_H
