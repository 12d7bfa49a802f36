//===- Passes.td - cost model passes ----------------------*- tablegen -*-===//

#ifndef PADDLE_COSTMODEL_PASSES_TD
#define PADDLE_COSTMODEL_PASSES_TD

include "mlir/Pass/PassBase.td"

def CostReportPass : Pass<"paddle-cost-report", "::mlir::ModuleOp"> {
  let summary = "Print the predicted cost of every paddle op on a device.";
  let description = [{
    Prints to stdout, for each function, one line per paddle op: its
    location, name, FLOPs, bytes moved (operands + results), predicted time
    and whether the roofline finds it compute- or memory-bound (or
    overhead-bound: no work beyond the call), and then the function's total.
    The time of an op is `max(FLOPs / peak(dtype), bytes / bandwidth) +
    call overhead` on the device of the module's target (`paddle.target`;
    `paddle-set-target` attaches one, and a module without one is reported
    on the default device). An op with a dynamic dim needs `dynamic-dim-size`;
    without it, its cost is reported as unknown (with the reason) and left
    out of the total. The IR is not changed.

    ```
    paddle-opt model.mlir --paddle-set-target=device=h200 \
        --paddle-cost-report -o /dev/null
    ```

    The format and the FLOP conventions are in docs/cost-model.md.
  }];
  let options = [
    Option<"dynamicDimSize", "dynamic-dim-size", "int64_t", "0",
           "Size assumed for every dynamic dim (0: costs with dynamic dims "
           "are unknown)">
  ];
  let dependentDialects = ["::mlir::paddle::PaddleDialect"];
}

def SetTargetPass : Pass<"paddle-set-target", "::mlir::ModuleOp"> {
  let summary = "Attach the target (#paddle.target) that later passes read.";
  let description = [{
    Sets the module's `paddle.target` attribute: the module's current target
    (or, without one, the default target: the spec `kDefaultDevice` in
    dialects/Paddle/IR/Target.h names, the host CPU's vector width, library `auto`, precision `f32`) with the given options
    replacing its fields. `device` is a built-in spec name (`xeon-amx-2c`,
    `h200`, `a100`) or the path of a JSON spec as `paddle-calibrate -o`
    writes it; the spec is copied into the attribute, so later passes read
    the IR and never a file. The options are the target options of the
    pipelines (Target.h), and `paddle-cpu-pipeline` runs this pass first.

    ```
    paddle-opt model.mlir --paddle-set-target="device=h200 library=none"
    ```
  }];
  let dependentDialects = ["::mlir::paddle::PaddleDialect"];
}

#endif // PADDLE_COSTMODEL_PASSES_TD
