//===- Donation.h - donated argument buffers ---------------------*- C++
//-*-===//
//
// An argument with `paddle.aliasing_output = N : i64` donates its buffer to
// result N of its function. The passes that implement it and the runtime
// signature (which must know which results a call no longer returns) read the
// attributes through this one function.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TRANSFORMS_DONATION_H
#define PADDLE_TRANSFORMS_DONATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::paddle {

struct DonatedArgument {
  int64_t argument;
  int64_t result;
};

/// The donated arguments of `func`, sorted by argument. Checks that each
/// names an existing result of the same static-shaped tensor type and that
/// no result is donated to twice; otherwise calls `error` with a message
/// naming the function and argument, and fails.
FailureOr<SmallVector<DonatedArgument>>
getDonatedArguments(func::FuncOp func,
                    llvm::function_ref<void(const llvm::Twine &)> error);

/// Removes every donation request from `module`'s functions, for tools whose
/// calls must return every result (paddle-run, paddle-compile's artifacts).
void dropDonationRequests(ModuleOp module);

} // namespace mlir::paddle

#endif // PADDLE_TRANSFORMS_DONATION_H
