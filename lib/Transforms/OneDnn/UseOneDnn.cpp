//===- UseOneDnn.cpp - matmul and conv through the oneDNN runtime ---------===//
//
// The library path: large f32 matmuls and convolutions on buffers become
// calls to the runtime's oneDNN kernels (paddle_runtime/onednn.h), which
// reach close to the CPU's peak where our own loops do not yet. The callees
// take strided memref descriptors (llvm.emit_c_interface), so any buffer
// with a unit innermost stride can be passed as it is.
//
// This file is the pass: the rewrites of the chosen ops into calls, fused
// epilogues and depthwise convs, and the channels-last layout after them.
// What can go to the library is matched in OneDnnMatch.cpp, Epilogue.cpp
// and ChannelsLast.cpp (OneDnnMatch.h); whether it should, in Choose.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Passes.h"

#include "../RuntimeFunctions.h"
#include "Choose.h"
#include "OneDnnMatch.h"
#include "dialects/Paddle/IR/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "paddle_runtime/onednn.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/bit.h"

#include <array>

#define DEBUG_TYPE "paddle-use-onednn"

namespace mlir::paddle {
#define GEN_PASS_DEF_USEONEDNNPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle::onednn;

namespace {

struct UseOneDnnPass : paddle::impl::UseOneDnnPassBase<UseOneDnnPass> {
  using UseOneDnnPassBase::UseOneDnnPassBase;

  /// The device and options the choice is made with (Choose.cpp).
  paddle::onednn::Choice choice;

  /// Library call or our own loops for `op` (Choice::isWorthLibraryCall),
  /// with the weights of a conv constant where a constant global holds
  /// them.
  bool isWorthLibraryCall(linalg::LinalgOp op, bool conv, Value weights,
                          double copyBytes = 0, double flopsPerIteration = 2) {
    return choice.isWorthLibraryCall(op, conv, weights,
                                     conv && isConstantWeights(weights),
                                     copyBytes, flopsPerIteration);
  }

  SymbolTable *symbols = nullptr;

  /// Declares `name` taking memrefs of `elements` (dynamic strided of
  /// `ranks`; unranked for a rank < 0), then unranked f32 extra operands,
  /// the unranked i64 state and program, and `scalars` i64s; or checks an
  /// existing one.
  FailureOr<func::FuncOp> declare(ModuleOp module, StringRef name,
                                  ArrayRef<int64_t> ranks,
                                  ArrayRef<Type> elements, int64_t scalars) {
    MLIRContext *ctx = module.getContext();
    SmallVector<Type> inputs;
    for (auto [rank, element] : llvm::zip_equal(ranks, elements))
      inputs.push_back(dynamicType(ctx, rank, element));
    inputs.append(PADDLE_ONEDNN_MAX_OPERANDS, dynamicType(ctx, -1));
    Type i64 = IntegerType::get(ctx, 64);
    inputs.append(2, UnrankedMemRefType::get(i64, Attribute()));
    inputs.append(scalars, i64);
    return paddle::declareRuntimeFunction(module, name,
                                          FunctionType::get(ctx, inputs, {}));
  }

  /// A private global of `type` (initial value `value`) named after
  /// `name`, made unique.
  memref::GlobalOp addGlobal(ModuleOp module, StringRef name, MemRefType type,
                             Attribute value, bool constant) {
    OpBuilder b(module.getBodyRegion());
    auto global = memref::GlobalOp::create(
        b, module.getLoc(), name, b.getStringAttr("private"), type, value,
        constant, /*alignment=*/IntegerAttr());
    symbols->insert(global);
    return global;
  }

  /// A call site's post-op program (a constant i64 global) and its state
  /// (a mutable i64 word, zero when loaded; onednn.h).
  std::pair<memref::GlobalOp, memref::GlobalOp>
  addProgramAndState(ModuleOp module, ArrayRef<int64_t> program) {
    Type i64 = IntegerType::get(module.getContext(), 64);
    auto programType = MemRefType::get({(int64_t)program.size()}, i64);
    memref::GlobalOp programGlobal = addGlobal(
        module, "__paddle_onednn_program", programType,
        DenseIntElementsAttr::get(
            RankedTensorType::get(programType.getShape(), i64), program),
        /*constant=*/true);
    auto stateType = MemRefType::get({1}, i64);
    memref::GlobalOp state =
        addGlobal(module, "__paddle_onednn_state", stateType,
                  DenseIntElementsAttr::get(RankedTensorType::get({1}, i64),
                                            ArrayRef<int64_t>{0}),
                  /*constant=*/false);
    return {programGlobal, state};
  }

  /// Appends a call's extra operands (`extras` as unranked f32 memrefs,
  /// the unused slots a dummy, so that activations have no uses the
  /// kernels do not read: storeChannelsLast), its state and its program.
  void appendExtrasAndGlobals(OpBuilder &b, Location loc, ModuleOp module,
                              SmallVectorImpl<Value> &args,
                              ArrayRef<Value> extras, memref::GlobalOp state,
                              memref::GlobalOp program) {
    MLIRContext *ctx = module.getContext();
    Type unrankedF32 = dynamicType(ctx, -1);
    Value unusedArg;
    for (int i = 0; i < PADDLE_ONEDNN_MAX_OPERANDS; ++i) {
      if (i < (int)extras.size()) {
        Value v = extras[i];
        args.push_back(v.getType() == unrankedF32
                           ? v
                           : memref::CastOp::create(b, loc, unrankedF32, v));
        continue;
      }
      if (!unusedArg)
        unusedArg = memref::CastOp::create(b, loc, unrankedF32,
                                           unusedOperand(module, b, loc));
      args.push_back(unusedArg);
    }
    Type unrankedI64 =
        UnrankedMemRefType::get(IntegerType::get(ctx, 64), Attribute());
    for (memref::GlobalOp global : {state, program}) {
      Value get = memref::GetGlobalOp::create(b, loc, global.getType(),
                                              global.getSymName());
      args.push_back(memref::CastOp::create(b, loc, unrankedI64, get));
    }
  }

  /// Whether `op` is a conv oneDNN may run as Winograd: 3x3, stride and
  /// dilation 1, not grouped, at least 64 input and output channels (the
  /// ResNet shapes where its Winograd kernels measured 1.2-2.5x faster than
  /// the direct ones, at the same error; docs/onednn.md, "Winograd").
  static bool allowsWinograd(linalg::LinalgOp op) {
    auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation());
    if (!conv)
      return false;
    auto ones = [](DenseIntElementsAttr attr) {
      return llvm::all_of(attr.getValues<APInt>(),
                          [](const APInt &v) { return v == 1; });
    };
    auto filter = cast<MemRefType>(conv.getDpsInputs()[1].getType());
    return ones(conv.getStrides()) && ones(conv.getDilations()) &&
           filter.getDimSize(2) == 3 && filter.getDimSize(3) == 3 &&
           filter.getDimSize(0) >= 64 && filter.getDimSize(1) >= 64;
  }

  /// A one-element f32 global the calls pass for extra operands their
  /// program does not use.
  Value unusedOperand(ModuleOp module, OpBuilder &b, Location loc) {
    auto type = MemRefType::get({1}, b.getF32Type());
    if (!unused)
      unused = addGlobal(
          module, "__paddle_onednn_unused", type,
          DenseFPElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()),
                                   ArrayRef<float>{0.0f}),
          /*constant=*/true);
    return memref::GetGlobalOp::create(b, loc, type, unused.getSymName());
  }
  memref::GlobalOp unused;

  /// Whether `v` is a constant global's contents.
  bool isConstantWeights(Value v) {
    auto get = v.getDefiningOp<memref::GetGlobalOp>();
    if (!get)
      return false;
    auto global = symbols->lookup<memref::GlobalOp>(get.getName());
    return global && global.getConstant();
  }

  /// Makes `op` read the sources of `transposes` (absorbableTransposes)
  /// through permuted maps and erases the transposes. A named op becomes
  /// the equivalent generic (matchMatmul reads any maps); returns the op
  /// that is left.
  linalg::LinalgOp absorbTransposes(
      linalg::LinalgOp op,
      ArrayRef<std::pair<unsigned, linalg::TransposeOp>> transposes) {
    MLIRContext *ctx = op.getContext();
    IRRewriter rewriter(ctx);
    linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(*op);
    if (!generic) {
      // This erases `op`: only `generic` is used below.
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
      if (failed(g))
        return op;
      generic = *g;
    }
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    for (auto [number, transpose] : transposes) {
      // Dim i of the transpose's output is dim perm[i] of its source.
      ArrayRef<int64_t> perm = transpose.getPermutation();
      AffineMap map = maps[number];
      SmallVector<AffineExpr> results(map.getNumResults());
      for (auto [i, e] : llvm::enumerate(map.getResults()))
        results[perm[i]] = e;
      maps[number] = AffineMap::get(map.getNumDims(), 0, results, ctx);
      generic->setOperand(number, transpose.getInput());
    }
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    for (auto [number, transpose] : transposes)
      transpose.erase();
    return generic;
  }

  /// A padding (a generic marked `marker`: `paddle.zero_pad` before a conv,
  /// `paddle.max_pool_pad` before a max pooling) that wrote the op's input for
  /// the op alone (writtenOnlyFor): oneDNN pads the source itself, so the
  /// copy can go.
  struct FoldablePad {
    linalg::GenericOp pad;
    Value source;                 // the op's input in its place
    std::array<int64_t, 4> sizes; // top, left, bottom, right
  };
  std::optional<FoldablePad> foldablePad(linalg::LinalgOp conv,
                                         StringRef marker) {
    Value input = conv.getDpsInputs()[0];
    // A grouped conv reads the padded NCHW buffer as [N, G, C, H, W].
    auto expand = input.getDefiningOp<memref::ExpandShapeOp>();
    Value padded = expand ? expand.getSrc() : input;
    auto paddedType = cast<MemRefType>(padded.getType());
    FoldablePad found;
    Operation *writer = writtenOnlyFor(conv, input, [&](Operation *it) {
      auto generic = dyn_cast<linalg::GenericOp>(it);
      auto sizes = generic ? generic->getAttrOfType<DenseI64ArrayAttr>(marker)
                           : DenseI64ArrayAttr();
      if (!sizes || sizes.size() != 4 || !generic.hasPureBufferSemantics() ||
          generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1 ||
          generic.getDpsInits()[0] != padded)
        return Value();
      SmallVector<memref::LoadOp> loads;
      generic.getBody()->walk([&](memref::LoadOp l) { loads.push_back(l); });
      if (loads.size() != 1)
        return Value();
      Value source = loads.front().getMemRef();
      auto sourceType = cast<MemRefType>(source.getType());
      if (sourceType.getRank() != 4 || !sourceType.hasStaticShape() ||
          !paddedType.hasStaticShape() ||
          sourceType.getElementType() != paddedType.getElementType())
        return Value();
      for (int d = 0; d < 4; ++d) {
        int64_t extra = d < 2 ? 0 : sizes[d - 2] + sizes[d];
        if (sourceType.getDimSize(d) + extra != paddedType.getDimSize(d))
          return Value();
      }
      found.pad = generic;
      found.source = source;
      llvm::copy(sizes.asArrayRef(), found.sizes.begin());
      return source;
    });
    if (!writer)
      return std::nullopt;
    if (expand) {
      // The source in the grouped form, where its layout allows.
      auto sourceType = cast<MemRefType>(found.source.getType());
      SmallVector<int64_t> shape(expand.getType().getShape());
      shape[3] = sourceType.getDimSize(2);
      shape[4] = sourceType.getDimSize(3);
      FailureOr<MemRefType> type = memref::ExpandShapeOp::computeExpandedType(
          sourceType, shape, expand.getReassociationIndices());
      if (failed(type) || !contiguousPair(*type, 1))
        return std::nullopt;
      OpBuilder b(conv);
      found.source =
          memref::ExpandShapeOp::create(b, expand.getLoc(), *type, found.source,
                                        expand.getReassociationIndices());
    }
    return found;
  }

  /// Replaces `op` by a call of `callee` on its operands (cast to ranked
  /// dynamic strided memrefs, or unranked ones with `unranked`), the extra
  /// operands, state and program, then `params` and the accumulate flag.
  /// An elementwise generic after it that oneDNN post-ops express (per-
  /// channel operands along `channel` of the output; none for nullopt) is
  /// fused into the call.
  /// `inputs` are the call's inputs in place of the op's (a conv's input
  /// that the call pads itself).
  LogicalResult replace(ModuleOp module, linalg::LinalgOp op, StringRef callee,
                        ArrayRef<int64_t> params,
                        std::optional<unsigned> channel, Value weights,
                        bool unranked = false,
                        std::optional<SmallVector<Value>> callInputs = {}) {
    SmallVector<Value> inputs =
        callInputs ? std::move(*callInputs) : op.getDpsInputs();
    SmallVector<int64_t> ranks;
    SmallVector<Type> elements;
    for (Value v : op->getOperands()) {
      auto type = cast<MemRefType>(v.getType());
      ranks.push_back(unranked ? -1 : type.getRank());
      elements.push_back(type.getElementType());
    }
    FailureOr<func::FuncOp> decl =
        declare(module, callee, ranks, elements, params.size() + 1);
    if (failed(decl))
      return failure();
    Value out = op.getDpsInits().front();
    ZeroInit init = zeroInitBefore(op, out);
    std::optional<Epilogue> epilogue;
    if (init.zero && fuse) {
      epilogue = matchEpilogue(op, out, init.erase, channel.value_or(~0u),
                               inputs, out);
      // A grouped conv's epilogue usually reads its output as NCHW, the
      // collapse of (group, channel in group): there the channel dim is
      // oneDNN's (g * F + f), so per-channel operands (a folded batch norm
      // on a depthwise conv) fuse too.
      if (!epilogue && isa<linalg::Conv2DNgchwGfchwOp>(op.getOperation()))
        if (Value nchw = collapsedGroups(out))
          epilogue =
              matchEpilogue(op, nchw, init.erase, /*channel=*/1, inputs, out);
      // Expanding an NCHW output back needs a contiguous one.
      auto outputType = epilogue ? cast<MemRefType>(epilogue->output.getType())
                                 : MemRefType();
      if (outputType &&
          outputType.getRank() != cast<MemRefType>(out.getType()).getRank() &&
          !outputType.getLayout().isIdentity())
        epilogue.reset();
    }
    Value output = epilogue ? epilogue->output : out;

    // The program: flags, count, then kind, operand, alpha, beta.
    int64_t flags =
        isConstantWeights(weights) ? PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS : 0;
    if (winograd && allowsWinograd(op))
      flags |= PADDLE_ONEDNN_FLAG_WINOGRAD;
    SmallVector<int64_t> program{flags, 0};
    if (epilogue) {
      program[1] = epilogue->ops.size();
      for (const PostOp &p : epilogue->ops)
        program.append({p.kind, p.operand, llvm::bit_cast<int64_t>(p.alpha),
                        llvm::bit_cast<int64_t>(p.beta)});
    }
    MLIRContext *ctx = module.getContext();
    auto [programGlobal, state] = addProgramAndState(module, program);

    // A fused call goes where the generic was: its output may be defined
    // after the op (only ops without memory effects are in between).
    OpBuilder b(epilogue ? epilogue->generic.getOperation()
                         : op.getOperation());
    Location loc = op.getLoc();
    if (epilogue && epilogue->residual &&
        !sameBuffer(epilogue->residual, output))
      memref::CopyOp::create(b, loc, epilogue->residual, output);
    SmallVector<Value> args;
    SmallVector<Value> operands(inputs);
    // An NCHW epilogue output of a grouped conv: back to [N, G, F, H, W].
    auto outType = cast<MemRefType>(out.getType());
    if (cast<MemRefType>(output.getType()).getRank() != outType.getRank())
      operands.push_back(memref::ExpandShapeOp::create(
          b, loc, outType.getShape(), output, groupReassociation()));
    else
      operands.push_back(output);
    for (auto [v, rank, element] : llvm::zip(operands, ranks, elements))
      args.push_back(
          memref::CastOp::create(b, loc, dynamicType(ctx, rank, element), v));
    appendExtrasAndGlobals(b, loc, module, args,
                           epilogue ? ArrayRef<Value>(epilogue->operands)
                                    : ArrayRef<Value>(),
                           state, programGlobal);
    for (int64_t p : params)
      args.push_back(arith::ConstantIntOp::create(b, loc, p, 64));
    args.push_back(arith::ConstantIntOp::create(b, loc, init.zero ? 0 : 1, 64));
    func::CallOp::create(b, loc, *decl, args);
    op->erase();
    if (init.erase)
      init.erase->erase();
    if (epilogue)
      epilogue->generic->erase();
    return success();
  }

  /// Whether `op` is a fill of `buffer` with -inf (a max's identity).
  static bool isNegInfFillOf(Operation *op, Value buffer) {
    auto fill = dyn_cast<linalg::FillOp>(op);
    FloatAttr value;
    return fill && fill.hasPureBufferSemantics() &&
           fill.getOutputs().front() == buffer &&
           matchPattern(fill.getInputs().front(), m_Constant(&value)) &&
           value.getValue().isInfinity() && value.getValue().isNegative();
  }

  /// Replaces a max pooling (f32 NCHW buffers with a unit innermost
  /// stride, unit dilations) whose output a -inf fill initializes right
  /// before it (trace calls, allocations and ops without memory effects
  /// aside) by a call of the oneDNN pooling, where the cost model
  /// predicts it faster (our pooling is scalar loops) or with `force`. The
  /// lowering's -inf padding copy folds into the call's padding where it
  /// was written for the pool alone; the fill goes (the call writes every
  /// output element). Other poolings stay.
  LogicalResult replaceMaxPool(ModuleOp module, linalg::PoolingNchwMaxOp op) {
    Value input = op.getInputs()[0], window = op.getInputs()[1],
          output = op.getOutputs()[0];
    auto supported = [](Value v) {
      auto type = dyn_cast<MemRefType>(v.getType());
      return type && type.getRank() == 4 && type.getElementType().isF32() &&
             type.isLastDimUnitStride();
    };
    auto windowType = dyn_cast<MemRefType>(window.getType());
    if (!supported(input) || !supported(output) || !windowType ||
        !windowType.hasStaticShape() || windowType.getRank() != 2 ||
        !llvm::all_of(op.getDilations().getValues<APInt>(),
                      [](const APInt &d) { return d == 1; }))
      return success();
    Operation *fill = nullptr;
    for (Operation *prev = op->getPrevNode(); prev && !fill;
         prev = prev->getPrevNode()) {
      if (isNegInfFillOf(prev, output))
        fill = prev;
      else if (!isTraceCall(prev) && !isMemoryEffectFree(prev) &&
               !onlyAllocates(prev))
        break;
    }
    if (!fill)
      return success();
    std::optional<FoldablePad> pad = foldablePad(
        op, paddle::PaddleDialect::MaxPoolPadAttrHelper::getNameStr());
    double copyBytes = bytesOf(output); // the fill
    if (pad)
      copyBytes += bytesOf(pad->pad.getDpsInits()[0]);
    if (!isWorthLibraryCall(op, /*conv=*/false, Value(), copyBytes,
                            /*flopsPerIteration=*/1))
      return success();
    MLIRContext *ctx = module.getContext();
    Type i64 = IntegerType::get(ctx, 64);
    SmallVector<Type> argTypes(2, dynamicType(ctx, 4));
    argTypes.append(8, i64);
    FailureOr<func::FuncOp> decl = paddle::declareRuntimeFunction(
        module, kMaxPool2D, FunctionType::get(ctx, argTypes, {}));
    if (failed(decl))
      return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<Value> args;
    for (Value v : {pad ? pad->source : input, output})
      args.push_back(memref::CastOp::create(b, loc, dynamicType(ctx, 4), v));
    SmallVector<int64_t> params(windowType.getShape());
    for (const APInt &v : op.getStrides().getValues<APInt>())
      params.push_back(v.getSExtValue());
    std::array<int64_t, 4> padding{};
    if (pad)
      padding = pad->sizes;
    params.append(padding.begin(), padding.end());
    for (int64_t p : params)
      args.push_back(arith::ConstantIntOp::create(b, loc, p, 64));
    func::CallOp::create(b, loc, *decl, args);
    op->erase();
    fill->erase();
    if (pad)
      pad->pad.erase();
    return success();
  }

  /// The call's constant i64 operands from `first` on; nullopt where one
  /// is not a constant.
  static std::optional<SmallVector<int64_t>> constantParams(func::CallOp call,
                                                            unsigned first) {
    SmallVector<int64_t> params;
    for (Value v : call.getOperands().drop_front(first)) {
      std::optional<int64_t> c = getConstantIntValue(v);
      if (!c)
        return std::nullopt;
      params.push_back(*c);
    }
    return params;
  }

  static Value withoutCasts(Value v) {
    while (auto cast = v.getDefiningOp<memref::CastOp>())
      v = cast.getSource();
    return v;
  }

  /// The post-op program a conv call passes (operand 8, a constant
  /// global), or nullopt.
  std::optional<SmallVector<int64_t>> programOf(func::CallOp call) {
    auto get =
        withoutCasts(call.getOperand(8)).getDefiningOp<memref::GetGlobalOp>();
    auto global =
        get ? symbols->lookup<memref::GlobalOp>(get.getName()) : nullptr;
    auto value = global ? dyn_cast_or_null<DenseIntElementsAttr>(
                              global.getInitialValueAttr())
                        : nullptr;
    if (!value || !global.getConstant())
      return std::nullopt;
    SmallVector<int64_t> words;
    for (const APInt &v : value.getValues<APInt>())
      words.push_back(v.getSExtValue());
    if (words.size() < 2 || words[1] < 0 ||
        words.size() != size_t(2 + 4 * words[1]))
      return std::nullopt;
    return words;
  }

  /// Whether a program's post-ops are a bias (first) and eltwise kinds
  /// only, what a depthwise post-op allows on either side of it.
  static bool onlyBiasAndEltwise(ArrayRef<int64_t> program) {
    for (int64_t i = 0; i < program[1]; ++i) {
      int64_t kind = program[2 + 4 * i];
      if (kind == PADDLE_ONEDNN_POST_BIAS ? i != 0
                                          : kind > PADDLE_ONEDNN_POST_GELU_TANH)
        return false;
    }
    return true;
  }

  /// Erases the casts, reshapes, constants and global gets that `roots`
  /// come from where nothing uses them any more, and the globals nothing
  /// else refers to then (the program and state of an erased call).
  void eraseDeadViews(ModuleOp module, ArrayRef<Value> roots) {
    SmallVector<Operation *> worklist;
    for (Value v : roots)
      if (Operation *op = v.getDefiningOp())
        worklist.push_back(op);
    llvm::SmallPtrSet<Operation *, 16> erased;
    llvm::SetVector<StringAttr> globals;
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (erased.contains(op) || !op->use_empty() ||
          !isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
               memref::GetGlobalOp, arith::ConstantOp>(op))
        continue;
      if (auto get = dyn_cast<memref::GetGlobalOp>(op))
        globals.insert(get.getNameAttr().getAttr());
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          worklist.push_back(def);
      erased.insert(op);
      op->erase();
    }
    for (StringAttr name : globals) {
      auto global = symbols->lookup<memref::GlobalOp>(name);
      if (global && global != unused &&
          SymbolTable::symbolKnownUseEmpty(global, module))
        symbols->erase(global);
    }
  }

  /// Folds the depthwise 3x3 conv call `dw` into the 1x1 conv call that
  /// alone writes its input (PADDLE_ONEDNN_POST_DEPTHWISE), where both are
  /// of the forms onednn.h allows; otherwise leaves both.
  void foldDepthwise(ModuleOp module, func::CallOp dw) {
    // stride_h, stride_w, dilations, padding top, left, bottom, right,
    // accumulate.
    std::optional<SmallVector<int64_t>> dwParams = constantParams(dw, 9);
    if (!dwParams || dwParams->size() != 9)
      return;
    int64_t stride = (*dwParams)[0];
    if ((stride != 1 && stride != 2) ||
        ArrayRef<int64_t>(*dwParams) !=
            ArrayRef<int64_t>{stride, stride, 1, 1, 1, 1, 1, 1, 0})
      return;
    Value filter = withoutCasts(dw.getOperand(1));
    auto filterType = dyn_cast<MemRefType>(filter.getType());
    auto input =
        withoutCasts(dw.getOperand(0)).getDefiningOp<memref::ExpandShapeOp>();
    // The output: the NCHW buffer the grouped form expands, or a grouped
    // buffer of its own (collapsed below).
    Value output = withoutCasts(dw.getOperand(2));
    auto outputExpand = output.getDefiningOp<memref::ExpandShapeOp>();
    auto outputType = dyn_cast<MemRefType>(output.getType());
    if (!filterType || !filterType.hasStaticShape() ||
        !filterType.getLayout().isIdentity() || !input ||
        input.getReassociationIndices() != groupReassociation() || !outputType)
      return;
    if (outputExpand
            ? outputExpand.getReassociationIndices() != groupReassociation()
            : outputType.getRank() != 5 || outputType.getDimSize(2) != 1 ||
                  !outputType.getLayout().isIdentity())
      return;
    int64_t channels = filterType.getDimSize(0);
    if (filterType.getShape() != ArrayRef<int64_t>{channels, 1, 1, 3, 3})
      return;
    // The 1x1 result: a buffer of this function's own that the 1x1 call
    // writes and the depthwise call reads, and nothing else uses (memory
    // planning overlaps no other live buffer with it).
    Value middle = input.getSrc();
    if (!isOwnBuffer(middle))
      return;
    func::CallOp conv;
    for (Operation *user : middle.getUsers()) {
      if (user == input.getOperation() || isa<memref::DeallocOp>(user))
        continue;
      auto cast = dyn_cast<memref::CastOp>(user);
      auto call = cast && cast->hasOneUse()
                      ? dyn_cast<func::CallOp>(*cast->user_begin())
                      : func::CallOp();
      if (!call || conv || call.getCallee() != kConv2D ||
          call.getOperand(2) != cast.getResult())
        return;
      conv = call;
    }
    if (!conv || conv->getBlock() != dw->getBlock() ||
        !conv->isBeforeInBlock(dw) ||
        !llvm::all_of(input->getUsers(), [&](Operation *u) {
          return u->hasOneUse() && *u->user_begin() == dw;
        }))
      return;
    std::optional<SmallVector<int64_t>> convParams = constantParams(conv, 9);
    auto weightsType =
        dyn_cast<MemRefType>(withoutCasts(conv.getOperand(1)).getType());
    if (!convParams ||
        ArrayRef<int64_t>(*convParams) !=
            ArrayRef<int64_t>{1, 1, 1, 1, 0, 0, 0, 0, 0} ||
        !weightsType || weightsType.getRank() != 4 ||
        weightsType.getDimSize(0) != channels ||
        weightsType.getDimSize(2) != 1 || weightsType.getDimSize(3) != 1)
      return;
    std::optional<SmallVector<int64_t>> first = programOf(conv),
                                        second = programOf(dw);
    if (!first || !second || !onlyBiasAndEltwise(*first) ||
        !onlyBiasAndEltwise(*second) ||
        ((*first)[0] | (*second)[0]) & PADDLE_ONEDNN_FLAG_WINOGRAD)
      return;

    // The fused program: the 1x1 call's post-ops, the depthwise one, the
    // depthwise call's; extra operands in that order.
    MLIRContext *ctx = module.getContext();
    OpBuilder b(dw);
    Location loc = dw.getLoc();
    Type unrankedF32 = dynamicType(ctx, -1);
    SmallVector<Value> extras;
    SmallVector<int64_t> program{
        ((*first)[0] & PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS) |
            (isConstantWeights(filter)
                 ? PADDLE_ONEDNN_FLAG_CONSTANT_DEPTHWISE_WEIGHTS
                 : 0),
        (*first)[1] + 1 + (*second)[1]};
    auto append = [&](ArrayRef<int64_t> words, func::CallOp call) {
      for (int64_t i = 0; i < words[1]; ++i) {
        SmallVector<int64_t> op(words.slice(2 + 4 * i, 4));
        if (op[0] == PADDLE_ONEDNN_POST_BIAS) {
          extras.push_back(call.getOperand(3 + op[1]));
          op[1] = extras.size() - 1;
        }
        program.append(op);
      }
    };
    append(*first, conv);
    extras.push_back(memref::CastOp::create(b, loc, unrankedF32, filter));
    program.append({PADDLE_ONEDNN_POST_DEPTHWISE, int64_t(extras.size() - 1),
                    llvm::bit_cast<int64_t>(double(stride)), 0});
    append(*second, dw);
    // At most a bias on either side and the filter.
    assert(extras.size() <= PADDLE_ONEDNN_MAX_OPERANDS);
    // One state word serves the 1x1 weights and the depthwise filter.
    auto [programGlobal, state] = addProgramAndState(module, program);
    Value nchw = outputExpand ? outputExpand.getSrc()
                              : memref::CollapseShapeOp::create(
                                    b, loc, output, groupReassociation());
    SmallVector<Value> args{
        conv.getOperand(0), conv.getOperand(1),
        memref::CastOp::create(b, loc, dynamicType(ctx, 4), nchw)};
    appendExtrasAndGlobals(b, loc, module, args, extras, state, programGlobal);
    for (int64_t p : *convParams)
      args.push_back(arith::ConstantIntOp::create(b, loc, p, 64));
    func::CallOp::create(b, loc, conv.getCallee(), conv.getResultTypes(), args);
    SmallVector<Value> dead(dw.getOperands());
    dead.append(conv.getOperands().begin() + 2, conv.getOperands().end());
    dw.erase();
    conv.erase();
    eraseDeadViews(module, dead);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    paddle::TargetAttr target = paddle::getOrAttachTarget(module);
    if (target.getLibrary() == paddle::LibraryChoice::None)
      return;
    choice = {target.getDeviceSpec(),
              target.getLibrary() == paddle::LibraryChoice::OneDnn,
              tileAndVectorize, target.getVectorBits()};
    SymbolTable table(module);
    symbols = &table;
    unused = {};
    SmallVector<linalg::LinalgOp> candidates;
    // Only the convolutions, matmuls and max poolings: a rewrite erases the
    // fill, padding and epilogue generic around its op, which must not be
    // visited later.
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op->getParentOfType<func::FuncOp>() &&
          (isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp,
               linalg::PoolingNchwMaxOp>(op) ||
           matchMatmul(op)))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates) {
      if (auto pool = dyn_cast<linalg::PoolingNchwMaxOp>(op.getOperation())) {
        if (failed(replaceMaxPool(module, pool)))
          return signalPassFailure();
        continue;
      }
      bool conv = isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp>(op);
      std::optional<MatmulForm> matmul;
      if (!conv && !(matmul = matchMatmul(op)))
        continue;
      SmallVector<MemRefType> types = supportedOperands(op);
      if (types.empty())
        continue;
      // bf16 inputs: the `_bf16` kernel (onednn.h).
      auto kernel = [&](StringRef name) {
        return (name + (isBF16Kernel(types) ? kBF16Suffix : "")).str();
      };
      LogicalResult result = success();
      if (matmul) {
        auto transposes = absorbableTransposes(op);
        double copyBytes = 0;
        for (auto &entry : transposes)
          copyBytes += bytesOf(entry.second.getInit());
        if (!isWorthLibraryCall(op, /*conv=*/false, op.getDpsInputs()[1],
                                copyBytes))
          continue;
        if (!transposes.empty()) {
          op = absorbTransposes(op, transposes);
          matmul = matchMatmul(op);
          types = supportedOperands(op);
          if (!matmul || types.empty())
            return signalPassFailure();
        }
        // Per-channel operands follow N, the output's last logical dim.
        unsigned rank = types[2].getRank();
        int64_t n =
            ((matmul->maps[2] >> (kMapBits * (matmul->batch.size() + 1))) &
             15) -
            1;
        (void)rank;
        result = replace(module, op, kernel(kMatmul),
                         {matmul->maps[0], matmul->maps[1], matmul->maps[2]},
                         static_cast<unsigned>(n), op.getDpsInputs()[1],
                         /*unranked=*/true);
      } else {
        // Convolutions: the filter's dims after the output channels are
        // the contraction (input channels per group, kernel height, width).
        bool grouped = isa<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
        DenseIntElementsAttr strides, dilations;
        if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
          strides = conv.getStrides();
          dilations = conv.getDilations();
        } else {
          auto g = cast<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
          strides = g.getStrides();
          dilations = g.getDilations();
          // The runtime merges (group, channel) into one oneDNN dim.
          if (!contiguousPair(types[0], 1) || !contiguousPair(types[2], 1))
            continue;
        }
        std::optional<FoldablePad> pad = foldablePad(
            op, paddle::PaddleDialect::ZeroPadAttrHelper::getNameStr());
        if (!isWorthLibraryCall(op, /*conv=*/true, op.getDpsInputs()[1],
                                pad ? bytesOf(pad->pad.getDpsInits()[0]) : 0)) {
          if (pad && pad->source.getDefiningOp<memref::ExpandShapeOp>())
            pad->source.getDefiningOp()->erase();
          continue;
        }
        SmallVector<int64_t> params;
        for (DenseIntElementsAttr attr : {strides, dilations})
          for (const APInt &v : attr.getValues<APInt>())
            params.push_back(v.getSExtValue());
        std::array<int64_t, 4> padding{};
        if (pad)
          padding = pad->sizes;
        params.append(padding.begin(), padding.end());
        SmallVector<Value> inputs(op.getDpsInputs());
        if (pad)
          inputs[0] = pad->source;
        // Grouped convs spread channels over two dims: per-channel
        // operands of the [N, G, F, H, W] output follow the group dim
        // where F is 1 (depthwise), and none otherwise; replace() also
        // tries the NCHW collapse.
        std::optional<unsigned> channel = 1;
        if (grouped && types[2].getDimSize(2) != 1)
          channel = std::nullopt;
        result = replace(module, op, kernel(grouped ? kConv2DGrouped : kConv2D),
                         params, channel, op.getDpsInputs()[1],
                         /*unranked=*/false, inputs);
        if (succeeded(result) && pad)
          pad->pad.erase();
      }
      if (failed(result))
        return signalPassFailure();
    }
    if (fuseDepthwise) {
      SmallVector<func::CallOp> depthwise;
      module.walk([&](func::CallOp call) {
        if (call.getCallee() == kConv2DGrouped)
          depthwise.push_back(call);
      });
      for (func::CallOp call : depthwise)
        foldDepthwise(module, call);
      // Its declaration, where every call folded.
      // (Declared outside `symbols`, as every runtime function is.)
      auto decl = dyn_cast_or_null<func::FuncOp>(
          SymbolTable::lookupSymbolIn(module, kConv2DGrouped));
      if (decl && SymbolTable::symbolKnownUseEmpty(decl, module))
        decl.erase();
    }
    if (channelsLast) {
      MLIRContext *ctx = module.getContext();
      auto reorder = [&] {
        return paddle::declareRuntimeFunction(
            module, kReorder,
            FunctionType::get(ctx, {dynamicType(ctx, 4), dynamicType(ctx, 4)},
                              {}));
      };
      SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
      for (func::FuncOp func : funcs)
        if (!func.isExternal() && failed(storeChannelsLast(func, reorder)))
          return signalPassFailure();
    }
  }
};

} // namespace
