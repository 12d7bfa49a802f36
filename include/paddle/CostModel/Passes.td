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
    call overhead` on the device spec named by `device`: a built-in spec
    (`xeon-amx-2c`, `h200`, `a100`) or the path of a JSON spec (as written
    by `paddle-calibrate`). An op with a dynamic dim needs `dynamic-dim-size`;
    without it, its cost is reported as unknown (with the reason) and left
    out of the total. The IR is not changed.

    ```
    paddle-opt model.mlir --paddle-cost-report="device=h200" -o /dev/null
    ```

    The format and the FLOP conventions are in docs/cost-model.md.
  }];
  let options = [
    Option<"device", "device", "std::string", "\"xeon-amx-2c\"",
           "Built-in device name or path of a device spec JSON file">,
    Option<"dynamicDimSize", "dynamic-dim-size", "int64_t", "0",
           "Size assumed for every dynamic dim (0: costs with dynamic dims "
           "are unknown)">
  ];
}

#endif // PADDLE_COSTMODEL_PASSES_TD
