//===- Passes.td - SPMD partitioning passes -----------------*- tablegen -*-===//

#ifndef PADDLE_SHARDING_PASSES_TD
#define PADDLE_SHARDING_PASSES_TD

include "mlir/Pass/PassBase.td"

def CompleteShardingPass
    : Pass<"paddle-complete-sharding", "::mlir::ModuleOp"> {
  let summary = "Check the shardings of a module and give every value one.";
  let description = [{
    Runs between upstream's `sharding-propagation` and `shard-partition`,
    which needs every ranked tensor to carry exactly one `shard.shard`
    annotation of its definition, read by all its users, and crashes where
    one is missing. For each function with `shard` annotations it:

    - checks that they name one mesh of static shape, split no static dim
      into uneven parts (the error names the dim, its size and the mesh
      axes), and use no halos or explicit shard offsets;
    - annotates each argument, and each op result that propagation left
      without one, as replicated, and makes every other user of a value
      read its annotation;
    - records the SPMD signature for the runtime: `paddle.mesh` (the mesh
      shape) on the function and `paddle.sharding` (per dim, the mesh axes
      that split it) on each argument and result.

    ```mlir
    shard.grid @mesh(shape = 2)
    func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
      %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
      %0 = shard.shard %x to %s : tensor<8x4xf32>
      ...
    ```
    gives `@f` the attribute `paddle.mesh = array<i64: 2>` and its argument
    `paddle.sharding = [array<i64: 0>, array<i64>]`.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def LowerCollectivesPass
    : Pass<"paddle-lower-collectives", "::mlir::ModuleOp"> {
  let summary = "Turn the `shard` collectives into calls to the runtime.";
  let description = [{
    After `shard-partition`, the partitioned functions hold `shard`
    collectives on tensors. This pass lowers each to a call of the
    runtime's SPMD functions (`paddle_runtime/spmd.h`), one lowering for
    every backend the runtime serves (in-process mesh, MPI, NCCL):

    - `all_reduce`, `all_gather`, `reduce_scatter`, `all_to_all`: the input
      is read as a buffer (`bufferization.to_buffer`), the result written
      into a new one (`memref.alloc`) by `paddle_spmd_<op>_<type>`;
    - `all_slice`: this device's block (`tensor.extract_slice`) at an offset
      from `process_multi_index`;
    - `process_multi_index`, `process_linear_index`: calls of
      `paddle_spmd_process_index`; `grid_shape`: constants.

    Every call names the mesh shape (checked against the run's) and its
    mesh axes, through constant globals. The `shard.grid` symbols are
    erased. A collective without a lowering (`broadcast`, `send`, `recv`,
    `shift`, ...) is an error naming it.

    ```mlir
    %r = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    ```
    becomes
    ```mlir
    %b = bufferization.to_buffer %x read_only : tensor<4xf32> to memref<4xf32>
    %o = memref.alloc() : memref<4xf32>
    func.call @paddle_spmd_all_reduce_f32(%bu, %ou, %mesh, %axes, %dtype, %op) ...
    %r = bufferization.to_tensor %o restrict writable : memref<4xf32> to tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::paddle::PaddleDialect"];
}

def ShardingReportPass
    : Pass<"paddle-sharding-report", "::mlir::ModuleOp"> {
  let summary = "Print how a module with a mesh is split and its collectives.";
  let description = [{
    Partitions a copy of the module (sharding-propagation,
    paddle-complete-sharding, shard-partition) and prints, per function,
    how each argument and result is split with its per-device shape, and
    every collective the partition inserted: the kind, the mesh axes, the
    bytes of the full buffer on each device, the location of the op or
    annotation that asked for it, and its predicted time over the target's
    link (alpha-beta, as paddle-cost-report). `json=PATH` also writes the
    report as JSON (whole or not at all). The module itself is left as it
    is.

    ```
    func @mlp on mesh [2, 2]
      argument 0  tensor<8x16xf32>  split [[0], []]  per device tensor<4x16xf32>
      ...
      all_reduce  axes [1]  16384 B  model.py:12  2.4 us
    ```
  }];
  let options = [
    Option<"json", "json", "std::string", /*default=*/"",
           "Also write the report as JSON to this file">
  ];
}

def AutoShardPass : Pass<"paddle-auto-shard", "::mlir::ModuleOp"> {
  let summary = "Choose every value's sharding with the cost model (ILP).";
  let description = [{
    Plans each function of a module on a device mesh: every paddle op gets
    one strategy (each mesh axis splits one loop of its sharding rule, or
    none) and every argument one split, so that the predicted time (each
    op's roofline time on its per-device share, the all-reduce of partial
    results, the resharding between a value's producer and its users,
    priced by the link of each mesh axis) is least, and the values alive
    at every op fit the per-device memory limit. The choice is an integer
    linear program solved by CBC within `time-limit` seconds; a plan not
    proven optimal in time is kept with a warning, and a memory limit no
    plan meets is an error naming the smallest peak any plan reaches.

    The plan becomes `shard.shard` annotations that the SPMD pipeline
    (`paddle-partition`) partitions as user shardings, and a `paddle.plan`
    dictionary on the function: predicted time, peak memory per device,
    solver status and time, problem size.

    - `mesh=2x4`: the mesh; created as `shard.grid @mesh` unless the
      module has one (which it must then equal). Default: the module's
      mesh, else the cluster's (nodes x devices per node).
    - `cluster=NAME|PATH`: a cluster spec (specs/clusters): its device
      prices ops, its links price collectives (inside or between nodes,
      by the mesh axis), its memory is the limit. Without one, the
      module's target and its link.
    - `memory-limit=16GB`: the limit per device (overrides the cluster's).
    - `gather-results=false`: results stay split where they are computed
      (the runtime otherwise gathers each whole after the call, an
      all-gather the plan pays for).
    - `dynamic-dim-size=N`, `dynamic-dim-multiple=M`: a dynamic dim is
      priced at N, and split only over mesh axes whose device count
      divides M (sizes are declared multiples of M), so the plan holds for
      every size the declaration allows; M = 1 (default): never split.

    The user's `shard.shard` annotations in a planned function are
    constraints: the value is split as asked where it is defined
    (`annotate_for_users` absent) or read by the op it feeds. A split that
    no strategy takes (a dim the op keeps whole) is an error naming the
    annotation and the op. `marked-only` (paddle-partition's use) plans
    only the functions marked `paddle.auto_shard`.
  }];
  let options = [
    Option<"mesh", "mesh", "std::string", /*default=*/"",
           "Mesh shape, e.g. 2x4 (default: the module's shard.grid)">,
    Option<"cluster", "cluster", "std::string", /*default=*/"",
           "Cluster spec: a built-in name (specs/clusters) or a JSON path">,
    Option<"memoryLimit", "memory-limit", "std::string", /*default=*/"",
           "Memory per device, e.g. 16GB, 512MiB (default: the cluster's)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"30",
           "Seconds the solver may search">,
    Option<"dynamicDimSize", "dynamic-dim-size", "int64_t", /*default=*/"0",
           "The size assumed for dynamic dims when pricing ops">,
    Option<"dynamicDimMultiple", "dynamic-dim-multiple", "int64_t",
           /*default=*/"1",
           "Dynamic dims are declared multiples of this: a split over mesh "
           "axes whose device count divides it holds for every size">,
    Option<"gatherResults", "gather-results", "bool", /*default=*/"true",
           "Price the gather of split results after the call (the runtime "
           "returns them whole); false where a result stays on its devices">,
    Option<"markedOnly", "marked-only", "bool", /*default=*/"false",
           "Plan only functions marked paddle.auto_shard">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def PartitionPass : Pass<"paddle-partition", "::mlir::ModuleOp"> {
  let summary = "Partition a module with a device mesh into its SPMD program.";
  let description = [{
    Where the module holds a `shard.grid`, runs `paddle-spmd-pipeline`
    (`sharding-propagation` on each function, `paddle-complete-sharding`,
    `shard-partition`, `canonicalize`, `paddle-lower-collectives`, `cse`);
    anything else is left as it is. `paddle-cpu-pipeline` starts with it,
    so a module with shardings compiles to the program each device of its
    mesh runs.
  }];
}

#endif // PADDLE_SHARDING_PASSES_TD
