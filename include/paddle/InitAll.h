//===- InitAll.h - one registration entry point for every tool ---*- C++
//-*-===//

#ifndef PADDLE_INITALL_H
#define PADDLE_INITALL_H

namespace mlir {
class DialectRegistry;
namespace paddle {

/// Adds the paddle dialect and every upstream dialect and interface the
/// pipelines use (including the LLVM IR translations needed by the JIT).
void registerAllDialects(DialectRegistry &registry);

/// Registers the paddle passes and pipelines, and the upstream passes.
void registerAllPasses();

} // namespace paddle
} // namespace mlir

#endif // PADDLE_INITALL_H
