//===- PaddleBase.td - paddle dialect base definitions ------*- tablegen -*-===//
//
// The dialect, its type constraints and the base class of every op.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_BASE_TD
#define PADDLE_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Paddle_Dialect : Dialect {
  let name = "paddle";
  let cppNamespace = "::mlir::paddle";
  let summary = "High-level tensor operations with NumPy/ONNX semantics.";
  let description = [{
    The `paddle` dialect holds models as captured by the frontend and the
    importers. Every op works on ranked tensors whose dims may be dynamic
    (`?`). Element types are `f32`, `f16`, `bf16`, `f64`, `i1`, `i8`, `i32`
    and `i64` (signless integers are read as signed; `i1` is a boolean).

    Binary elementwise ops broadcast their operands as NumPy does: shapes are
    aligned at their trailing dims and a dim of size 1 stretches to match the
    other. A dynamic dim never broadcasts: at run time it must equal the size
    it is matched against (static or dynamic); compiled code checks this, and
    a call that breaks it fails with an error naming the op's location.
    Operands of one op share one element type: conversions are explicit
    (`paddle.cast`).

    Every tensor fits in memory arithmetic: the verifier of every op rejects
    an operand or result type whose static sizes make more than 2^63 - 1
    bytes, and compiled code checks dynamic sizes (non-negative, the same
    bound) before it allocates a tensor or loops over one, failing with a
    message that names the op's location.

    The dialect is lowered to `linalg`/`tensor`/`arith`/`math` by
    `--paddle-convert-paddle-to-linalg`, and all the way to the LLVM dialect by
    the `paddle-cpu-pipeline` pipeline.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  // The attributes passes and frontends hand to later passes, declared here
  // with their types: the verifier checks each, and rejects any other
  // `paddle.*` attribute. PaddleDialect::<Name>AttrHelper gives the name.
  let discardableAttrs = (ins
    // On a module: what it is compiled for (PaddleTarget.td).
    "::mlir::paddle::TargetAttr":$target,
    // On the linalg.generic that zero-pads a conv2d's NCHW input in its
    // spatial dims: the padding, [top, left, bottom, right]. The generic
    // reads its source with one tensor.extract; paddle-use-onednn folds such
    // a copy into a library convolution's own padding.
    "::mlir::DenseI64ArrayAttr":$zero_pad,
    // The same for the generic that pads a max_pool2d's NCHW input with the
    // max's identity, when every padding size is static: bottom and right
    // include the extra rows a ceil-mode window needs.
    "::mlir::DenseI64ArrayAttr":$max_pool_pad,
    // On an scf.parallel: the minimum number of iterations per block that
    // paddle-async-parallel-for makes (default: its min-task-size option);
    // set on loops of few, large iterations (tiles, a group's row tiles).
    "::mlir::IntegerAttr":$min_task_size,
    // On the private functions paddle-split-functions cuts a long function
    // into; paddle-inline-parts inlines them back.
    "::mlir::UnitAttr":$part,
    // On a module: the names of the kernels paddle-instrument-kernels
    // numbered, by id (taken off before translation to LLVM IR).
    "::mlir::ArrayAttr":$kernel_names,
    // Memory plan records (paddle-plan-memory{record-plan}): a function's
    // plan, a planned buffer's view, an alloc left out of the plan and why.
    "::mlir::DictionaryAttr":$memory,
    "::mlir::DictionaryAttr":$buffer,
    "::mlir::StringAttr":$unplanned,
    // A gradient request (paddle-autodiff): on the requested function, the
    // function to differentiate and the arguments to differentiate by.
    "::mlir::FlatSymbolRefAttr":$vjp_of,
    "::mlir::DenseI64ArrayAttr":$wrt,
    // On a function between paddle-donate-buffers and
    // paddle-drop-donated-results: the results donated arguments received.
    "::mlir::DenseI64ArrayAttr":$donated_results,
    // On a function argument: the result whose buffer the argument is
    // donated to (an i64 index).
    "::mlir::IntegerAttr":$aliasing_output,
    // The SPMD signature (paddle-complete-sharding): on a function, the
    // shape of the device mesh it runs on; on each of its arguments and
    // results, per dim, the mesh axes that split it (an array<i64> each).
    "::mlir::DenseI64ArrayAttr":$mesh,
    "::mlir::ArrayAttr":$sharding,
    // On a function of a module with a mesh: paddle-partition first lets
    // paddle-auto-shard choose its shardings. paddle-auto-shard then
    // records on it the plan's prediction (predicted step time, peak
    // memory per device, solver status and time).
    "::mlir::UnitAttr":$auto_shard,
    "::mlir::DictionaryAttr":$plan
  );
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Paddle_FloatElement : AnyTypeOf<[F16, BF16, F32, F64]>;
def Paddle_IntElement : AnyTypeOf<[I8, I32, I64]>;
def Paddle_Element : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I32, I64]>;

def Paddle_Tensor : RankedTensorOf<[F16, BF16, F32, F64, I1, I8, I32, I64]>;
def Paddle_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
/// Numbers that arithmetic applies to: every element type but i1.
def Paddle_NumericTensor : RankedTensorOf<[F16, BF16, F32, F64, I8, I32, I64]>;
def Paddle_IntOrBoolTensor : RankedTensorOf<[I1, I8, I32, I64]>;
def Paddle_IndexTensor : RankedTensorOf<[I32, I64]>;
def Paddle_BoolTensor : RankedTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

/// The static sizes of every operand and result type fit in memory
/// arithmetic (verifyTensorSizes in TypeInference.h): no element count or
/// byte size computed from them overflows.
def Paddle_SizedTensors : NativeOpTrait<"SizedTensors"> {
  let cppNamespace = "::mlir::paddle";
}

class Paddle_Op<string mnemonic, list<Trait> traits = []>
    : Op<Paddle_Dialect, mnemonic, !listconcat([Paddle_SizedTensors], traits)>;

/// Result types are inferred by one shared function (TypeInference.h), which
/// the verifier, the builders without result types and the Python tracer all
/// call. A written result type only has to be compatible with the inferred
/// one: a static dim may stand where `?` is inferred and the other way round.
/// `compatible` names the function that decides it (TypeInference.h).
class Paddle_InferTypesWith<code body,
                            string compatible = "areCompatibleReturnTypes">
    : TraitList<[
  DeclareOpInterfaceMethods<InferTypeOpInterface>,
  NativeOpTrait<"InferTypeOpAdaptor", [], [{
    static ::llvm::LogicalResult
    inferReturnTypes(::mlir::MLIRContext *context,
                     std::optional<::mlir::Location> location, Adaptor adaptor,
                     ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
  }] # body # [{
    }
    static bool isCompatibleReturnTypes(::mlir::TypeRange l,
                                        ::mlir::TypeRange r) {
      return ::mlir::paddle::}] # compatible # [{(l, r);
    }
  }], [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::OpaqueProperties properties, ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      $cppClass::Adaptor adaptor(operands, attributes, properties, regions);
      return $cppClass::inferReturnTypes(context, location, adaptor,
                                         inferredReturnTypes);
    }
  }]>
]>;

#endif // PADDLE_BASE_TD
