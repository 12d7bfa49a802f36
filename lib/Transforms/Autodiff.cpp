//===- Autodiff.cpp - reverse-mode gradient functions ---------------------===//
//
// Gives each gradient request (a private declaration with paddle.vjp_of and
// paddle.wrt) a body: a clone of the differentiated function followed by the
// reverse sweep over its ops, built from the ops' gradient rules
// (PaddleGradientOpInterface). See docs/autodiff.md for the contract.
//
//===----------------------------------------------------------------------===//

#include "paddle/Transforms/Passes.h"

#include "paddle/Support/Location.h"

#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::paddle {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

/// Only floating-point tensors carry gradients.
static bool isDifferentiable(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && isa<FloatType>(t.getElementType());
}

static std::string typeListStr(TypeRange types) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return s;
}

namespace {

/// Builds the body of one request.
class VjpBuilder {
public:
  VjpBuilder(func::FuncOp request, func::FuncOp primal, ArrayRef<int64_t> wrt)
      : request(request), primal(primal), wrt(wrt),
        builder(request.getContext()) {}

  LogicalResult build();

private:
  /// Adds `grad` to the gradient of `value`.
  void accumulate(Value value, Value grad);

  func::FuncOp request, primal;
  ArrayRef<int64_t> wrt;
  OpBuilder builder;
  DenseMap<Value, Value> grads;
};

} // namespace

void VjpBuilder::accumulate(Value value, Value grad) {
  auto it = grads.find(value);
  if (it == grads.end()) {
    grads[value] = grad;
    return;
  }
  it->second = AddOp::create(builder, grad.getLoc(), it->second, grad);
}

/// Casts `v` to `type` when they differ only in static information.
static Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

LogicalResult VjpBuilder::build() {
  FunctionType primalType = primal.getFunctionType();
  unsigned numArgs = primalType.getNumInputs();
  unsigned numResults = primalType.getNumResults();

  Block *body = request.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (unsigned i = 0; i < numArgs; ++i)
    mapping.map(primal.getArgument(i), body->getArgument(i));

  // The forward computation, cloned.
  Block &primalBody = primal.getBody().front();
  SmallVector<Operation *> forward;
  for (Operation &op : primalBody.without_terminator())
    forward.push_back(builder.clone(op, mapping));
  auto primalReturn = cast<func::ReturnOp>(primalBody.getTerminator());
  SmallVector<Value> results;
  for (Value v : primalReturn.getOperands())
    results.push_back(mapping.lookupOrDefault(v));

  // Activity: values that depend (differentiably) on a wrt argument. Only
  // ops with an active operand need a gradient rule.
  DenseSet<Value> active;
  for (int64_t i : wrt)
    active.insert(body->getArgument(i));
  for (Operation *op : forward) {
    bool anyActive = llvm::any_of(op->getOperands(),
                                  [&](Value v) { return active.contains(v); });
    if (!anyActive)
      continue;
    for (Value r : op->getResults())
      if (isDifferentiable(r.getType()))
        active.insert(r);
  }

  // Seed the results with their cotangents (integer results are ignored).
  for (unsigned i = 0; i < numResults; ++i)
    if (active.contains(results[i]))
      accumulate(results[i], body->getArgument(numArgs + i));

  // The reverse sweep.
  for (Operation *op : llvm::reverse(forward)) {
    if (!llvm::any_of(op->getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    SmallVector<Value> resultGrads;
    bool anyGrad = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(grads.lookup(r));
      anyGrad |= resultGrads.back() != nullptr;
    }
    if (!anyGrad)
      continue;
    SmallVector<Value> operandGrads;
    if (auto castOp = dyn_cast<tensor::CastOp>(op)) {
      // Only static information changes: cast the gradient back.
      operandGrads.push_back(castTo(builder, op->getLoc(), resultGrads[0],
                                    castOp.getSource().getType()));
    } else if (auto shardOp = dyn_cast<shard::ShardOp>(op)) {
      // A sharding constraint (pm.shard) is the identity on values: the
      // operand's gradient is the result's, split the same way, so the
      // backward keeps the layout the forward asked for. The sharding
      // operand gets none.
      operandGrads.push_back(shard::ShardOp::create(
          builder, op->getLoc(), resultGrads[0], shardOp.getSharding(),
          /*annotate_for_users=*/false));
      operandGrads.push_back(nullptr);
    } else {
      auto rule = dyn_cast<PaddleGradientOpInterface>(op);
      if (!rule)
        return op->emitError()
               << op->getName() << " at " << describeLocation(op->getLoc())
               << " has no gradient rule (differentiating @"
               << primal.getSymName() << " for @" << request.getSymName()
               << ")";
      if (failed(rule.buildGradient(builder, resultGrads, operandGrads)))
        return op->emitError()
               << "could not build the gradient of " << op->getName()
               << " for @" << request.getSymName();
    }
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError() << "gradient rule of " << op->getName() << " gave "
                             << operandGrads.size() << " gradients for "
                             << op->getNumOperands() << " operands";
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !active.contains(operand))
        continue;
      auto ot = cast<RankedTensorType>(operand.getType());
      auto gt = dyn_cast<RankedTensorType>(grad.getType());
      if (!gt || gt.getRank() != ot.getRank() ||
          gt.getElementType() != ot.getElementType())
        return op->emitError()
               << "gradient rule of " << op->getName() << " gave "
               << grad.getType() << " for an operand of type " << ot;
      accumulate(operand, grad);
    }
  }

  // Results: the primal results, then one gradient per wrt argument.
  Location loc = request.getLoc();
  SmallVector<Value> returned;
  for (Value r : results)
    returned.push_back(r);
  for (int64_t i : wrt) {
    Value arg = body->getArgument(i);
    Value g = grads.lookup(arg);
    if (!g) {
      auto type = cast<RankedTensorType>(arg.getType());
      Attribute zero = builder.getFloatAttr(type.getElementType(), 0.0);
      if (type.hasStaticShape()) {
        g = ConstantOp::create(builder, loc,
                               DenseElementsAttr::get(type, zero));
      } else {
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(tensor::DimOp::create(builder, loc, arg, d));
        Value scalar =
            arith::ConstantOp::create(builder, loc, cast<TypedAttr>(zero));
        g = tensor::SplatOp::create(builder, loc, type, scalar, sizes);
      }
    }
    returned.push_back(g);
  }
  for (auto [i, v] : llvm::enumerate(returned))
    returned[i] =
        castTo(builder, loc, v, request.getFunctionType().getResult(i));
  func::ReturnOp::create(builder, loc, returned);

  // Rules build gradients of every operand; drop those nobody asked for.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return success();
}

namespace {

struct AutodiffPass : paddle::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override;

  /// Checks a request against the function it differentiates.
  LogicalResult verifyRequest(func::FuncOp request, func::FuncOp primal,
                              ArrayRef<int64_t> wrt);
};

} // namespace

LogicalResult AutodiffPass::verifyRequest(func::FuncOp request,
                                          func::FuncOp primal,
                                          ArrayRef<int64_t> wrt) {
  FunctionType pt = primal.getFunctionType();
  SmallVector<Type> inputs(pt.getInputs());
  llvm::append_range(inputs, pt.getResults());
  SmallVector<Type> results(pt.getResults());
  for (int64_t i : wrt) {
    if (i < 0 || i >= static_cast<int64_t>(pt.getNumInputs()))
      return request.emitError()
             << "paddle.wrt index " << i << " is out of range: @"
             << primal.getSymName() << " has " << pt.getNumInputs()
             << " arguments";
    if (!isDifferentiable(pt.getInput(i)))
      return request.emitError()
             << "paddle.wrt argument " << i << " of @" << primal.getSymName()
             << " has type " << pt.getInput(i)
             << "; only floating-point tensors can be differentiated";
    results.push_back(pt.getInput(i));
  }
  if (llvm::SmallDenseSet<int64_t>(wrt.begin(), wrt.end()).size() != wrt.size())
    return request.emitError() << "paddle.wrt lists an argument twice";
  FunctionType expected =
      FunctionType::get(request.getContext(), inputs, results);
  if (request.getFunctionType() != expected)
    return request.emitError()
           << "type of @" << request.getSymName()
           << " does not match the gradient request of @" << primal.getSymName()
           << ": expected " << typeListStr(expected.getInputs()) << " -> "
           << typeListStr(expected.getResults()) << " (arguments of @"
           << primal.getSymName() << ", one cotangent per result; results of @"
           << primal.getSymName() << ", one gradient per wrt argument), got "
           << typeListStr(request.getFunctionType().getInputs()) << " -> "
           << typeListStr(request.getFunctionType().getResults());
  if (!primal.getBody().hasOneBlock())
    return request.emitError()
           << "@" << primal.getSymName()
           << " must be a single block to be differentiated";
  WalkResult calls = primal.walk([&](CallOpInterface call) {
    call->emitError() << "@" << primal.getSymName()
                      << " makes a call, which paddle-autodiff does not "
                         "differentiate: inline calls first (--inline)";
    return WalkResult::interrupt();
  });
  if (calls.wasInterrupted())
    return failure();
  return success();
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);

  SmallVector<func::FuncOp> pending;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(paddle::PaddleDialect::VjpOfAttrHelper::getNameStr()))
      pending.push_back(func);

  // Build in dependency order: a request whose target is itself a pending
  // request waits for it.
  DenseSet<Operation *> waiting;
  for (func::FuncOp f : pending)
    waiting.insert(f);
  while (!pending.empty()) {
    bool progress = false;
    SmallVector<func::FuncOp> round(pending);
    for (func::FuncOp request : round) {
      auto target = request->getAttrOfType<FlatSymbolRefAttr>(
          paddle::PaddleDialect::VjpOfAttrHelper::getNameStr());
      auto wrtAttr = request->getAttrOfType<DenseI64ArrayAttr>(
          paddle::PaddleDialect::WrtAttrHelper::getNameStr());
      if (!target) {
        request.emitError()
            << paddle::PaddleDialect::VjpOfAttrHelper::getNameStr()
            << " must be a flat symbol reference";
        return signalPassFailure();
      }
      if (!wrtAttr) {
        request.emitError()
            << "gradient request needs "
            << paddle::PaddleDialect::WrtAttrHelper::getNameStr()
            << " = array<i64: ...>";
        return signalPassFailure();
      }
      if (!request.isDeclaration()) {
        request.emitError() << "gradient request @" << request.getSymName()
                            << " must be a declaration (it has a body)";
        return signalPassFailure();
      }
      auto primal = symbols.lookup<func::FuncOp>(target.getValue());
      if (!primal) {
        request.emitError() << "@" << target.getValue()
                            << " (paddle.vjp_of) is not a function of the "
                               "module";
        return signalPassFailure();
      }
      if (waiting.contains(primal))
        continue;
      if (primal.isDeclaration()) {
        request.emitError()
            << "@" << target.getValue() << " has no body to differentiate";
        return signalPassFailure();
      }
      ArrayRef<int64_t> wrt = wrtAttr.asArrayRef();
      if (failed(verifyRequest(request, primal, wrt)))
        return signalPassFailure();
      if (failed(VjpBuilder(request, primal, wrt).build()))
        return signalPassFailure();
      request->removeAttr(paddle::PaddleDialect::VjpOfAttrHelper::getNameStr());
      request->removeAttr(paddle::PaddleDialect::WrtAttrHelper::getNameStr());
      request.setPrivate();
      waiting.erase(request);
      llvm::erase(pending, request);
      progress = true;
    }
    if (!progress) {
      pending.front().emitError() << "gradient requests form a cycle through @"
                                  << pending.front().getSymName();
      return signalPassFailure();
    }
  }
}
