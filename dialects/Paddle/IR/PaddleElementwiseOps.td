//===- PaddleElementwiseOps.td - creation and elementwise ops -*- tablegen -*-===//

#ifndef PADDLE_ELEMENTWISE_OPS_TD
#define PADDLE_ELEMENTWISE_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

def Paddle_ConstantOp : Paddle_Op<"constant", [ConstantLike, Pure,
    Paddle_InferTypesWith<[{
      inferredReturnTypes.push_back(adaptor.getValue().getType());
      return ::mlir::success();
    }]>]> {
  let summary = "A tensor of known values.";
  let description = [{
    Produces the tensor given by `value`, dense elements or a dense resource
    (whose data must be as large as its type). The result type is the
    attribute's type, so it is always static. A splat larger than 64 KiB is
    filled when the code runs rather than stored, so a huge one is an
    out-of-memory error at run time, not a huge artifact.

    ```mlir
    %c = paddle.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Paddle_IotaOp : Paddle_Op<"iota", [Pure]> {
  let summary = "Counts 0, 1, 2, ... along one dim.";
  let description = [{
    `result[i0, ..., in] = i_dimension`, converted to the element type. Each
    dynamic dim of the result takes its size from one `index` operand, in
    order (as `tensor.empty` does); a negative size, or sizes whose product
    overflows, is an error at run time.

    ```mlir
    %i = paddle.iota dim = 1 : tensor<2x3xi64>
    %j = paddle.iota [%n] dim = 0 : tensor<?xf32>
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes,
                       I64Attr:$dimension);
  let results = (outs Paddle_NumericTensor:$result);
  let assemblyFormat = [{
    (`[` $dynamic_sizes^ `]`)? `dim` `=` $dimension attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

class Paddle_UnaryOp<string mnemonic, Type operandType, string semantics,
                     list<Trait> traits = []>
    : Paddle_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
        SameOperandsAndResultElementType,
        Paddle_InferTypesWith<[{
          inferredReturnTypes.push_back(adaptor.getX().getType());
          return ::mlir::success();
        }]>])> {
  let summary = "Elementwise " # mnemonic # ".";
  let description = "`result = " # semantics # "`, element by element.\n\n"
      # "```mlir\n%r = paddle." # mnemonic
      # " %x : tensor<4x?xf32> -> tensor<4x?xf32>\n```";
  let arguments = (ins operandType:$x);
  let results = (outs operandType:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasFolder = 1;
}

def Paddle_NegOp : Paddle_UnaryOp<"neg", Paddle_NumericTensor, "-x">;
def Paddle_AbsOp : Paddle_UnaryOp<"abs", Paddle_NumericTensor, "|x|">;
def Paddle_ExpOp : Paddle_UnaryOp<"exp", Paddle_FloatTensor, "e^x">;
def Paddle_LogOp : Paddle_UnaryOp<"log", Paddle_FloatTensor, "ln(x)">;
def Paddle_SqrtOp : Paddle_UnaryOp<"sqrt", Paddle_FloatTensor, "sqrt(x)">;
def Paddle_RsqrtOp : Paddle_UnaryOp<"rsqrt", Paddle_FloatTensor, "1 / sqrt(x)">;
def Paddle_TanhOp : Paddle_UnaryOp<"tanh", Paddle_FloatTensor, "tanh(x)">;
def Paddle_SigmoidOp
    : Paddle_UnaryOp<"sigmoid", Paddle_FloatTensor, "1 / (1 + e^-x)">;
def Paddle_ReluOp : Paddle_UnaryOp<"relu", Paddle_NumericTensor, "max(x, 0)">;
def Paddle_ErfOp : Paddle_UnaryOp<"erf", Paddle_FloatTensor, "erf(x)">;
def Paddle_SinOp : Paddle_UnaryOp<"sin", Paddle_FloatTensor, "sin(x)">;
def Paddle_CosOp : Paddle_UnaryOp<"cos", Paddle_FloatTensor, "cos(x)">;
def Paddle_FloorOp : Paddle_UnaryOp<"floor", Paddle_FloatTensor, "floor(x)">;
def Paddle_CeilOp : Paddle_UnaryOp<"ceil", Paddle_FloatTensor, "ceil(x)">;
def Paddle_RoundOp : Paddle_UnaryOp<"round", Paddle_FloatTensor,
    "x rounded to the nearest integer, halves to even (as numpy.round)">;
def Paddle_SignOp : Paddle_UnaryOp<"sign", Paddle_NumericTensor,
    "-1, 0 or 1 (NaN stays NaN)">;
def Paddle_NotOp : Paddle_UnaryOp<"not", Paddle_IntOrBoolTensor,
    "logical not for i1, bitwise not for integers">;

def Paddle_GeluOp : Paddle_UnaryOp<"gelu", Paddle_FloatTensor,
    "x * Phi(x)"> {
  let description = [{
    Gaussian error linear unit, `x * 0.5 * (1 + erf(x / sqrt(2)))`. With
    `approximate` set, the tanh form
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.

    ```mlir
    %r = paddle.gelu %x {approximate} : tensor<8xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Paddle_FloatTensor:$x, UnitAttr:$approximate);
}

//===----------------------------------------------------------------------===//
// Binary elementwise, with NumPy broadcasting
//===----------------------------------------------------------------------===//

class Paddle_BinaryOp<string mnemonic, Type operandType, string semantics,
                      list<Trait> traits = []>
    : Paddle_Op<mnemonic, !listconcat(traits, [Pure,
        SameOperandsAndResultElementType,
        Paddle_InferTypesWith<[{
          return ::mlir::paddle::inferBroadcastBinary(location,
              adaptor.getLhs().getType(), adaptor.getRhs().getType(),
              /*resultElementType=*/nullptr, inferredReturnTypes);
        }]>])> {
  let summary = "Elementwise " # mnemonic # " with broadcasting.";
  let description = "`result = " # semantics # "`, element by element, after"
      # " NumPy broadcasting of the operands.\n\n"
      # "```mlir\n%r = paddle." # mnemonic
      # " %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>\n```";
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasFolder = 1;
}

def Paddle_AddOp : Paddle_BinaryOp<"add", Paddle_NumericTensor, "lhs + rhs",
                                   [Commutative]>;
def Paddle_SubOp : Paddle_BinaryOp<"sub", Paddle_NumericTensor, "lhs - rhs">;
def Paddle_MulOp : Paddle_BinaryOp<"mul", Paddle_NumericTensor, "lhs * rhs",
                                   [Commutative]>;
def Paddle_DivOp : Paddle_BinaryOp<"div", Paddle_NumericTensor,
    "lhs / rhs; for integers floor division as numpy's `//`, and 0 where rhs is 0">;
def Paddle_PowOp : Paddle_BinaryOp<"pow", Paddle_NumericTensor,
    "lhs ** rhs; for integers a negative exponent gives 0 unless lhs is 1 or -1">;
def Paddle_MaximumOp : Paddle_BinaryOp<"maximum", Paddle_NumericTensor,
    "max(lhs, rhs), NaN if either is NaN", [Commutative]>;
def Paddle_MinimumOp : Paddle_BinaryOp<"minimum", Paddle_NumericTensor,
    "min(lhs, rhs), NaN if either is NaN", [Commutative]>;
def Paddle_RemOp : Paddle_BinaryOp<"rem", Paddle_NumericTensor,
    "lhs mod rhs with the sign of rhs, as numpy.remainder (0 where an integer rhs is 0)">;
def Paddle_AndOp : Paddle_BinaryOp<"and", Paddle_IntOrBoolTensor,
    "lhs & rhs (logical for i1)", [Commutative]>;
def Paddle_OrOp : Paddle_BinaryOp<"or", Paddle_IntOrBoolTensor,
    "lhs | rhs (logical for i1)", [Commutative]>;
def Paddle_XorOp : Paddle_BinaryOp<"xor", Paddle_IntOrBoolTensor,
    "lhs ^ rhs (logical for i1)", [Commutative]>;

def Paddle_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison of paddle.compare", [
      I32EnumAttrCase<"EQ", 0, "eq">, I32EnumAttrCase<"NE", 1, "ne">,
      I32EnumAttrCase<"LT", 2, "lt">, I32EnumAttrCase<"LE", 3, "le">,
      I32EnumAttrCase<"GT", 4, "gt">, I32EnumAttrCase<"GE", 5, "ge">]> {
  let cppNamespace = "::mlir::paddle";
  let genSpecializedAttr = 0;
}
def Paddle_CompareDirectionAttr
    : EnumAttr<Paddle_Dialect, Paddle_CompareDirection, "direction">;

def Paddle_CompareOp : Paddle_Op<"compare", [Pure, SameOperandsElementType,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferBroadcastBinary(location,
          adaptor.getLhs().getType(), adaptor.getRhs().getType(),
          ::mlir::IntegerType::get(context, 1), inferredReturnTypes);
    }]>]> {
  let summary = "Elementwise comparison with broadcasting.";
  let description = [{
    Compares after NumPy broadcasting and gives an `i1` tensor. Floats
    compare as IEEE ordered predicates except `ne`, which is true for NaN
    (as in NumPy).

    ```mlir
    %m = paddle.compare lt, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Paddle_CompareDirectionAttr:$direction,
                       Paddle_Tensor:$lhs, Paddle_Tensor:$rhs);
  let results = (outs Paddle_BoolTensor:$result);
  let assemblyFormat = [{
    $direction `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->`
    type($result)
  }];
  let hasFolder = 1;
}

def Paddle_SelectOp : Paddle_Op<"select", [Pure,
    Paddle_InferTypesWith<[{
      return ::mlir::paddle::inferSelect(location, adaptor.getCond().getType(),
          adaptor.getOnTrue().getType(), adaptor.getOnFalse().getType(),
          inferredReturnTypes);
    }]>]> {
  let summary = "Picks elements by a boolean mask, with broadcasting.";
  let description = [{
    `result = cond ? on_true : on_false` after broadcasting all three operands
    together (numpy.where).

    ```mlir
    %r = paddle.select %c, %a, %b
        : tensor<4xi1>, tensor<4xf32>, tensor<1xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Paddle_BoolTensor:$cond, Paddle_Tensor:$on_true,
                       Paddle_Tensor:$on_false);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,`
    type($on_true) `,` type($on_false) `->` type($result)
  }];
  let hasFolder = 1;
}

def Paddle_CastOp : Paddle_Op<"cast", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "Converts the element type.";
  let description = [{
    Converts each element to the result's element type as `numpy.astype`:
    floats to integers round toward zero (the result is unspecified when out
    of range or NaN), integers are sign-extended or truncated, `i1` converts
    to 0 or 1, and any value converts to `i1` as `x != 0`.

    ```mlir
    %r = paddle.cast %x : tensor<4xf32> -> tensor<4xi32>
    ```
  }];
  let arguments = (ins Paddle_Tensor:$x);
  let results = (outs Paddle_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasFolder = 1;
}

#endif // PADDLE_ELEMENTWISE_OPS_TD
