//===- OneDnnMatch.h - what paddle-use-onednn can hand to oneDNN -*- C++-*-===//
//
// Shared by the files of paddle-use-onednn (lib/Transforms/OneDnn/): the
// runtime's kernel names, the ops and operands its kernels take, the buffer
// aliasing that decides what a call may replace, the epilogues it fuses as
// post-ops, and the channels-last layout of conv activations. The pass
// (UseOneDnn.cpp) chooses among these (Choose.h) and rewrites into calls.
// Each definition carries its full description.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TRANSFORMS_ONEDNN_ONEDNNMATCH_H
#define PADDLE_TRANSFORMS_ONEDNN_ONEDNNMATCH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <optional>

namespace mlir::paddle::onednn {

/// The runtime's kernels (the names the code calls; with emit_c_interface
/// the calls go to `_mlir_ciface_<name>`, runtime/src/symbols.cpp).
constexpr llvm::StringLiteral kMatmul = "paddle_onednn_matmul";
constexpr llvm::StringLiteral kConv2D = "paddle_onednn_conv2d";
constexpr llvm::StringLiteral kConv2DGrouped = "paddle_onednn_conv2d_grouped";
constexpr llvm::StringLiteral kReorder = "paddle_onednn_reorder";
constexpr llvm::StringLiteral kMaxPool2D = "paddle_onednn_max_pool2d";
/// The matmul and convolutions on bf16 inputs: `<kernel>_bf16`.
constexpr llvm::StringLiteral kBF16Suffix = "_bf16";

/// Bits per logical dim in a packed dim map (see onednn.h).
constexpr int kMapBits = 4;

/// A contraction oneDNN's matmul computes: loops `batch` (any number), `m`,
/// `n` and one reduction `k`, and for each operand the packed map from its
/// logical dims (a: batch..., m, k; b: batch..., k, n; c: batch..., m, n)
/// to its memref dims (onednn.h, paddle_onednn_matmul).
struct MatmulForm {
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  int64_t maps[3];
};

//===----------------------------------------------------------------------===//
// Ops and operands the kernels take (OneDnnMatch.cpp).
//===----------------------------------------------------------------------===//

/// The operands of a kernel call that are NCHW activations.
SmallVector<unsigned, 2> activationOperands(func::CallOp call);
/// The ops' operands as the kernels take them; empty where unsupported.
SmallVector<MemRefType> supportedOperands(linalg::LinalgOp op);
/// Whether the kernel for `types` (supportedOperands) is the bf16 one.
bool isBF16Kernel(ArrayRef<MemRefType> types);
/// The contractions oneDNN's matmul computes, as a MatmulForm.
std::optional<MatmulForm> matchMatmul(linalg::LinalgOp op);
/// Product of static sizes; a dynamic dim counts as 1.
int64_t staticProduct(ArrayRef<int64_t> sizes);
/// Bytes of a memref's static elements (a dynamic dim counts as 1).
double bytesOf(Value v);
/// Whether dims `d` and `d + 1` are statically contiguous with each other.
bool contiguousPair(MemRefType type, int64_t d);
/// The memref type the kernels take (unranked for a rank < 0).
Type dynamicType(MLIRContext *ctx, int64_t rank, Type element = {});

//===----------------------------------------------------------------------===//
// Aliasing of buffers (OneDnnMatch.cpp).
//===----------------------------------------------------------------------===//

/// Where a buffer lives: a root value (an allocation, a global, a call's
/// result, a block argument) and a byte range in it; `end` = INT64_MAX
/// for "anywhere in the root".
struct Region {
  Value root;
  int64_t begin = 0, end = INT64_MAX;
};

Region regionOf(Value v);
/// Whether `a` and `b` may share memory.
bool mayAlias(Value a, Value b);
/// Whether `a` and `b` are the same memory.
bool sameBuffer(Value a, Value b);
/// Whether `op` only allocates.
bool onlyAllocates(Operation *op);
bool isTraceCall(Operation *op);

/// How an op's output starts: known zeros (then the kernel overwrites it),
/// with the op to erase that wrote them, if only the op needs it.
struct ZeroInit {
  bool zero = false;
  Operation *erase = nullptr;
};

/// The zero initialization of `buffer` before `op`.
ZeroInit zeroInitBefore(Operation *op, Value buffer);

/// The op before `op` that wrote its operand `copy` for `op` alone.
Operation *writtenOnlyFor(Operation *op, Value copy,
                          function_ref<Value(Operation *)> sourceOf);
/// The matmul operands that a linalg.transpose wrote for `op` alone.
SmallVector<std::pair<unsigned, linalg::TransposeOp>>
absorbableTransposes(linalg::LinalgOp op);

//===----------------------------------------------------------------------===//
// Grouped convs and buffers of the function's own (OneDnnMatch.cpp).
//===----------------------------------------------------------------------===//

/// How the paddle lowering collapses [N, G, F, H, W] to NCHW.
SmallVector<ReassociationIndices> groupReassociation();
/// The NCHW collapse of a grouped conv's output `out`, or null.
Value collapsedGroups(Value out);
/// Whether the function allocates `v` itself (its layout is its own).
bool isOwnBuffer(Value v);

//===----------------------------------------------------------------------===//
// Epilogues as oneDNN post-ops (Epilogue.cpp).
//===----------------------------------------------------------------------===//

struct PostOp {
  int64_t kind;
  int64_t operand = -1; // index into the extra operands
  double alpha = 0, beta = 0;
};

/// The epilogue fused into a library call: the generic it replaces, the
/// post-ops, their operands and the buffer the call writes.
struct Epilogue {
  linalg::GenericOp generic;
  SmallVector<PostOp> ops;
  SmallVector<Value> operands;
  Value residual, output;
};

/// The elementwise generic after `op` that post-ops express, if any.
std::optional<Epilogue> matchEpilogue(Operation *op, Value out, Operation *init,
                                      unsigned channel, ValueRange inputs,
                                      Value written);

//===----------------------------------------------------------------------===//
// Channels-last activations (ChannelsLast.cpp).
//===----------------------------------------------------------------------===//

/// Stores the activations only conv and pooling calls use channels-last;
/// returns how many buffers changed layout.
FailureOr<unsigned>
storeChannelsLast(func::FuncOp func,
                  llvm::function_ref<FailureOr<func::FuncOp>()> reorder);

} // namespace mlir::paddle::onednn

#endif // PADDLE_TRANSFORMS_ONEDNN_ONEDNNMATCH_H
