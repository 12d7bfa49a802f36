//===- PaddleTarget.td - the target of a module --------------*- tablegen -*-===//
//
// What a module is compiled for: the device and its cost-model spec, the
// vector width code is tiled for, who runs matmuls and convolutions, and the
// input precision. docs/architecture.md, "Targets", says who attaches it and
// which passes read it.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TARGET_TD
#define PADDLE_TARGET_TD

include "dialects/Paddle/IR/PaddleBase.td"

def Paddle_LibraryChoice : I32EnumAttr<"LibraryChoice",
    "who runs large f32 matmuls and convolutions (docs/onednn.md)", [
      // Per op, the path the cost model predicts faster.
      I32EnumAttrCase<"Auto", 0, "auto">,
      // oneDNN for every op it supports.
      I32EnumAttrCase<"OneDnn", 1, "onednn">,
      // Always our own loops (artifacts do not link oneDNN).
      I32EnumAttrCase<"None", 2, "none">]> {
  let cppNamespace = "::mlir::paddle";
  let genSpecializedAttr = 0;
}

def Paddle_Precision : I32EnumAttr<"Precision",
    "input precision of matmul and conv2d (docs/bf16.md)", [
      // f32 throughout.
      I32EnumAttrCase<"F32", 0, "f32">,
      // bf16 inputs, f32 accumulation and result (paddle-convert-precision).
      I32EnumAttrCase<"BF16", 1, "bf16">]> {
  let cppNamespace = "::mlir::paddle";
  let genSpecializedAttr = 0;
}

def Paddle_TargetAttr : AttrDef<Paddle_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "The device a module is compiled for, and how.";
  let description = [{
    Attached to a module as `paddle.target` (by `paddle-set-target`, which
    the pipelines run first, or by a frontend). Every pass that needs the
    device reads it from here:

    - `device`: the name of the device spec;
    - `spec`: the device spec itself (the JSON of docs/cost-model.md as a
      dictionary, without its notes), so the IR alone decides what the cost
      model predicts;
    - `vector_bits`: the vector register width code is tiled for (128, 256
      or 512);
    - `library`: who runs large matmuls and convolutions (`auto`, `onednn`,
      `none`);
    - `precision`: the input precision of matmuls and convolutions (`f32`,
      `bf16`).

    ```mlir
    module attributes {paddle.target = #paddle.target<device = "h200",
        vector_bits = 512, library = auto, precision = f32,
        spec = {cores = 132 : i64, kind = "gpu", ...}>} { ... }
    ```
  }];
  let parameters = (ins
    StringRefParameter<"name of the device spec">:$device,
    "int64_t":$vector_bits,
    EnumParameter<Paddle_LibraryChoice>:$library,
    EnumParameter<Paddle_Precision>:$precision,
    "::mlir::DictionaryAttr":$spec);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The target for `spec` (stored without its notes and source).
    static TargetAttr get(::mlir::MLIRContext *context,
                          const ::mlir::paddle::DeviceSpec &spec,
                          int64_t vectorBits, LibraryChoice library,
                          Precision precision);
    /// The device spec this target holds (the verifier has checked it).
    ::mlir::paddle::DeviceSpec getDeviceSpec() const;
  }];
}

#endif // PADDLE_TARGET_TD
