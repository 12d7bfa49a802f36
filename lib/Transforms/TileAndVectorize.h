//===- TileAndVectorize.h - which matmuls get the tiled kernel ---*- C++-*-===//
//
// Shared by paddle-tile-and-vectorize and paddle-use-onednn: the library
// choice predicts our code from the kernel the op will actually get, so both
// ask the same rule.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TRANSFORMS_TILEANDVECTORIZE_H
#define PADDLE_TRANSFORMS_TILEANDVECTORIZE_H

#include "paddle/CostModel/MatmulTiles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::paddle {

/// Whether paddle-tile-and-vectorize (with `vectorBits`) turns `op` into its
/// tiled FMA kernel: a linalg.matmul or linalg.batch_matmul with default
/// maps, static shapes, f32 (or bf16 input) operands with a unit innermost
/// stride, and tiles that divide the shape.
bool isTiledMatmul(linalg::LinalgOp op, int64_t vectorBits);

} // namespace mlir::paddle

#endif // PADDLE_TRANSFORMS_TILEANDVECTORIZE_H
