//===- fma_peak.c - fp32 FMA throughput microbenchmark ----------*- C -*-===//
//
// Peak fp32 FLOP/s of one core, measured: 12 independent chains of vector
// multiply-adds. Written with GCC vector extensions and compiled with
// -march=native -ffp-contract=fast, so it becomes AVX-512 FMAs where the
// CPU has them and AVX2 FMAs where it does not.
// benchmarks/peers/peak.py compiles it and calls it from one Python thread
// per core (ctypes releases the GIL).
//
//===----------------------------------------------------------------------===//

#if defined(__AVX512F__)
#define LANES 16
#else
#define LANES 8
#endif
typedef float vec __attribute__((vector_size(LANES * 4)));

// Lanes of the vector type the loop uses (FLOPs per round: 12 * LANES * 2).
int fma_peak_lanes(void) { return LANES; }

// Runs `iters` rounds of 12 vector multiply-adds and returns a value that
// depends on all of them, so nothing is optimized away. Each chain starts
// from a different value, or the compiler would merge the identical chains.
float fma_peak_run(long iters) {
  vec a, b, c[12];
  for (int i = 0; i < LANES; ++i) {
    a[i] = 1.0f;
    b[i] = 0.999999f;
    for (int k = 0; k < 12; ++k)
      c[k][i] = 1.0f + 0.01f * k + 0.001f * i;
  }
  vec c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], c5 = c[5];
  vec c6 = c[6], c7 = c[7], c8 = c[8], c9 = c[9], c10 = c[10], c11 = c[11];
  for (long i = 0; i < iters; ++i) {
    c0 = c0 * b + a;
    c1 = c1 * b + a;
    c2 = c2 * b + a;
    c3 = c3 * b + a;
    c4 = c4 * b + a;
    c5 = c5 * b + a;
    c6 = c6 * b + a;
    c7 = c7 * b + a;
    c8 = c8 * b + a;
    c9 = c9 * b + a;
    c10 = c10 * b + a;
    c11 = c11 * b + a;
  }
  vec s = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7)) +
          ((c8 + c9) + (c10 + c11));
  float r = 0.0f;
  for (int i = 0; i < LANES; ++i)
    r += s[i];
  return r;
}
