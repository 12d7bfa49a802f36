//===- MatmulTiles.h - tile sizes of the tiled matmul kernel -----*- C++-*-===//
//
// The tile sizes paddle-tile-and-vectorize gives a matmul: the tiling
// policy of our generated code. It lives with the cost model, which owns
// the predictions made from it (the library choice of paddle-use-onednn and
// paddle-cost-report: our code is costed by the kernel the op will actually
// get); the transform includes it from here. Header-only.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_COSTMODEL_MATMULTILES_H
#define PADDLE_COSTMODEL_MATMULTILES_H

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

namespace mlir::paddle {

/// The largest of `candidates` (descending) that divides `size` and is a
/// multiple of `multipleOf`, or 0 if none.
inline int64_t pickDivisor(int64_t size, std::initializer_list<int64_t> list,
                           int64_t multipleOf = 1) {
  for (int64_t c : list)
    if (c <= size && size % c == 0 && c % multipleOf == 0)
      return c;
  return 0;
}

/// Register (MR x NR) and cache (MB x NB x KB) tiles of a matmul.
struct MatmulTiles {
  int64_t mr, nr, mb, nb, kb;
};

/// The tiles of an `m` x `n` x `k` matmul (batch excluded) with
/// `vectorBits`-wide registers, or nullopt when no register tile divides
/// the shape (the op then stays scalar loops).
inline std::optional<MatmulTiles>
pickMatmulTiles(int64_t m, int64_t n, int64_t k, int64_t vectorBits) {
  // A 512-bit register holds 16 f32: 8 rows of 2 registers are 16
  // accumulators of 32 (AVX-512); with 256-bit registers (16 of them),
  // 4 rows of 2 leave room for the B row and the A broadcasts.
  int64_t mrMax = vectorBits >= 512 ? 8 : 4;
  int64_t nrMax = vectorBits >= 512 ? 32 : 16;
  int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
  int64_t nr = 0;
  for (int64_t c = nrMax; c >= lanes / 2 && c >= 4 && !nr; c /= 2)
    if (c <= n && n % c == 0)
      nr = c;
  if (!nr)
    return std::nullopt;
  // A narrower tile (N not a multiple of the widest) takes up to twice the
  // rows, as many accumulators as the wide tile at half the width: with
  // half as many, each B load fed half as many FMAs. 256x64x784 (N = 49 *
  // 16) as 16x16 tiles instead of 8x16: 0.93x the time on 1 thread
  // (median of 9 alternating runs).
  int64_t rows = std::min(mrMax * nrMax / nr, 2 * mrMax);
  int64_t mr = pickDivisor(m, {rows, rows / 2, rows / 4, 2, 1});
  if (!mr)
    return std::nullopt;
  // Blocks: an A panel (MB x KB) and a B panel (KB x NB) stay in L2. NB is
  // the widest multiple of NR up to 128 that divides N.
  int64_t mb = pickDivisor(m, {64, 32, 16, 8, 4, 2, 1}, mr);
  int64_t nb = 0;
  for (int64_t c = 128 / nr * nr; c >= nr && !nb; c -= nr)
    if (c <= n && n % c == 0)
      nb = c;
  int64_t kb = pickDivisor(k, {256, 128, 64, 32, 16, 8, 4, 2, 1});
  if (!mb || !nb || !kb)
    return std::nullopt;
  return MatmulTiles{mr, nr, mb, nb, kb};
}

} // namespace mlir::paddle

#endif // PADDLE_COSTMODEL_MATMULTILES_H
