//===- Passes.td - paddle transformation passes --------------*- tablegen -*-===//

#ifndef PADDLE_TRANSFORMS_PASSES_TD
#define PADDLE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerRuntimeChecksPass
    : Pass<"paddle-lower-runtime-checks", "::mlir::ModuleOp"> {
  let summary = "Turn cf.assert into calls to the runtime's error handler.";
  let description = [{
    Compiled code checks at run time what the types cannot prove, such as two
    dynamic dims that broadcasting requires to be equal. Upstream lowers a
    failed `cf.assert` to `abort()`, which would kill the user's process. This
    pass replaces each assert, once the function is a CFG, with a branch to a
    block that calls `paddle_runtime_check_failed(message)`: the runtime then
    unwinds to the `paddle_invoke` that made the call, which returns an error
    status carrying the message. Memory the call allocated before the failure
    is not freed.

    ```mlir
    cf.assert %ok, "dims differ"
    ```
    becomes
    ```mlir
    cf.cond_br %ok, ^continue, ^fail
    ^fail:
      llvm.call @paddle_runtime_check_failed(%message) : (!llvm.ptr) -> ()
      llvm.unreachable
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def InstrumentKernelsPass
    : Pass<"paddle-instrument-kernels", "::mlir::ModuleOp"> {
  let summary = "Bracket every kernel with calls that record trace events.";
  let description = [{
    For per-kernel profiling (`paddle-run --trace`). Run on bufferized IR,
    before linalg is lowered to loops: each linalg op and `memref.copy` in a
    function body is a kernel. The pass gives each a module-wide id, brackets
    it with calls to the runtime's `paddle_trace_kernel_begin(id)` and
    `paddle_trace_kernel_end(id)`, and records the kernel names (the op name
    and its source location) by id in the module attribute
    `paddle.kernel_names`, which the JIT and paddle-compile hand to the
    runtime. Outside a traced session the calls return at once; modules
    compiled without this pass carry no instrumentation at all.

    ```mlir
    linalg.generic ... // loc("model.mlir":4:10)
    ```
    becomes
    ```mlir
    %id = arith.constant 0 : i64
    func.call @paddle_trace_kernel_begin(%id) : (i64) -> ()
    linalg.generic ...
    func.call @paddle_trace_kernel_end(%id) : (i64) -> ()
    // module attributes {paddle.kernel_names = ["linalg.generic model.mlir:4:10"]}
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def OutlineKernelsPass : Pass<"paddle-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Move every kernel into a private function of its own.";
  let description = [{
    Compile time (docs/compile-time.md, "Scaling with the op count"). Runs
    on buffers, after memory planning and paddle-use-onednn. Each kernel of
    a function (a linalg op, a `memref.copy`, or a loop: a fused group's
    tile loop; not one inside another) moves into a private function
    `kernel_N`, with a call in its place. Constants it uses are cloned in;
    every other value it uses becomes an argument. Run-time checks, library
    calls and trace brackets stay in the caller.

    Followed by `paddle-dedup-functions`, this makes the lowering that
    comes after (tiling, vectorization, loops, async dispatch) run once per
    distinct kernel rather than once per op: the layers of a model repeat
    the same kernels on the same shapes. It also keeps the functions the
    later passes see small, where several upstream passes cost the square
    of a function's size.

    ```mlir
    func.func @main(%a: memref<16xf32>, %b: memref<16xf32>) {
      linalg.copy ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
      return
    }
    ```
    becomes
    ```mlir
    func.func @main(%a: memref<16xf32>, %b: memref<16xf32>) {
      call @kernel(%a, %b) : (memref<16xf32>, memref<16xf32>) -> ()
      return
    }
    func.func private @kernel(%a: memref<16xf32>, %b: memref<16xf32>) {
      linalg.copy ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def SplitFunctionsPass : Pass<"paddle-split-functions", "::mlir::ModuleOp"> {
  let summary = "Cut long functions into parts for bufferization.";
  let description = [{
    Compile time (docs/compile-time.md, "Scaling with the op count"). On
    tensors, before `eliminate-empty-tensors` and `one-shot-bufferize`,
    whose analysis checks each tensor operand against every use of its
    value: a weight read by n ops of one function costs O(n^2). A function
    of more than twice `ops-per-part` ops is cut into consecutive parts of
    at least that many; each part moves into a private function marked
    `paddle.part`, called in order from the function, and
    `paddle-inline-parts` puts it back after bufferization.

    A tensor crosses a cut only where bufferization gives it the same buffer
    either way: a function argument (a donated one stays writable in the
    part), a constant, or a value written into a `tensor.empty` (or a
    reshape of one) that no later op writes into or inserts. At most
    `max-values-across` values cross a cut: bufferizing a call is quadratic
    in its operands and results. Where no such cut is found the function
    stays as it is (a training step, whose activations live from the
    forward to the backward pass, is not cut).

    ```mlir
    func.func @f(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
      <ops 0 .. k-1 using %x, %w, defining %v>
      <ops k .. n-1 using %v, %w, defining %r>
      return %r : tensor<4xf32>
    }
    ```
    becomes
    ```mlir
    func.func @f(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
      %v = call @f_part(%x, %w) : (...) -> tensor<4xf32>
      %r = call @f_part_0(%v, %w) : (...) -> tensor<4xf32>
      return %r : tensor<4xf32>
    }
    func.func private @f_part(...) attributes {paddle.part} { <ops 0 .. k-1> }
    func.func private @f_part_0(...) attributes {paddle.part} { <ops k .. n-1> }
    ```
  }];
  let options = [
    Option<"opsPerPart", "ops-per-part", "int64_t", /*default=*/"256",
           "The fewest ops of a part (a function with twice as many is "
           "cut)">,
    Option<"maxValuesAcross", "max-values-across", "int64_t",
           /*default=*/"16",
           "The most values a cut may pass from a part to later ones">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def InlinePartsPass : Pass<"paddle-inline-parts", "::mlir::ModuleOp"> {
  let summary = "Inline the parts paddle-split-functions made.";
  let description = [{
    After `one-shot-bufferize`: every call of a private function marked
    `paddle.part` is replaced by the function's body, and the function is
    erased, so memory planning and the rest of the pipeline see the
    function whole again. A part that is not one block, or whose call does
    not match its signature, is an error.
  }];
}

def SplitDeallocsPass : Pass<"paddle-split-deallocs", "::mlir::ModuleOp"> {
  let summary = "Give each fresh allocation of a bufferization.dealloc a "
                "dealloc of its own.";
  let description = [{
    Compile time (docs/compile-time.md, "Scaling with the op count"). Runs
    between `ownership-based-buffer-deallocation` and
    `buffer-deallocation-simplification`, and does what the latter's split
    pattern does for the memrefs that are `memref.alloc` or
    `memref.alloca` results: two distinct allocations never alias, so only
    the op's other memrefs are asked about, where upstream asks about every
    pair (quadratic in the memrefs a block frees: one per intermediate
    result of a long function). Each split-off memref gets a
    `bufferization.dealloc` of its own with the op's retained memrefs; the
    rest stay in one op; each retained memref's ownership is the `or` of
    what the new ops return.

    ```mlir
    %r = bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>)
        if (%c, %d) retain (%x : memref<4xf32>)
    ```
    becomes
    ```mlir
    %r0 = bufferization.dealloc (%a : memref<4xf32>) if (%c) retain (%x : memref<4xf32>)
    %r1 = bufferization.dealloc (%b : memref<4xf32>) if (%d) retain (%x : memref<4xf32>)
    %r2 = bufferization.dealloc retain (%x : memref<4xf32>)
    %o = arith.ori %r2, %r0 : i1
    %r = arith.ori %o, %r1 : i1
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def PlanMemoryPass : Pass<"paddle-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Give temporary buffers static offsets in one per-call "
                "workspace.";
  let description = [{
    Runs on buffers (after bufferization, the ownership-based deallocation
    pipeline and convert-bufferization-to-memref). In each function it
    plans every `memref.alloc` of the entry block that has a static shape and
    an identity layout and whose aliases (views, reshapes) are only read or
    written by ops that keep no reference: linalg ops on buffers,
    loads/stores, `memref.copy`. A buffer that reaches `func.return`, a call,
    a terminator or any other op stays a `memref.alloc`, marked with
    `paddle.unplanned = "<reason>"`, as do dynamic shapes and buffers above
    1 TiB (left to the allocator, which reports running out of memory, so
    offsets and the workspace size never overflow).

    A buffer lives from its first to its last use, counted over the ops of
    the entry block (a use inside a loop counts at the loop). Buffers whose
    lifetimes meet never overlap in memory, with one exception: when an
    all-parallel linalg op reads buffer A and writes buffer B through
    identity indexing maps, A dies at that op, B is born there and both have
    the same size, B reuses A's memory (element i of B only depends on
    element i of A). Buffers are placed largest first, each at the lowest
    64-byte-aligned offset that is free for its whole lifetime.

    Planned buffers become views of one workspace that the function takes
    from the runtime at entry and gives back before each return:

    ```mlir
    %0 = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    ...
    memref.dealloc %0 : memref<4x8xf32>
    ```
    becomes
    ```mlir
    %ws = call @paddle_workspace_acquire(%c256_i64) : (i64) -> memref<?xi8>
    %0 = memref.view %ws[%c0][] : memref<?xi8> to memref<4x8xf32>
    ...
    call @paddle_workspace_release(%ws) : (memref<?xi8>) -> ()
    ```

    The two functions are declared with `llvm.emit_c_interface`, so compiled
    code calls the runtime's `_mlir_ciface_paddle_workspace_acquire` and
    `_mlir_ciface_paddle_workspace_release`. The plan is recorded on the
    function, `paddle.memory = {naive, planned, lower_bound, buffers,
    in_place, unplanned, positions}` (bytes, each buffer rounded up to 64),
    and on each view, `paddle.buffer = {id, offset, size, first, last,
    writer}`, and on each alloc left, `paddle.unplanned = "<reason>"`;
    `paddle-print-memory-plan` reports it. The CPU pipeline plans with
    `record-plan=false`, so the lowered module carries no paddle attributes.
  }];
  let options = [Option<"recordPlan", "record-plan", "bool", "true",
                        "Record the plan as attributes in the IR">];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PrintMemoryPlanPass
    : Pass<"paddle-print-memory-plan", "::mlir::ModuleOp"> {
  let summary = "Print the plan of paddle-plan-memory as a table (and JSON).";
  let description = [{
    Prints, for each function that `paddle-plan-memory` planned, the bytes
    all its temporaries would take one after another (naive), the planned
    workspace, the lower bound (most bytes live at one op), the ratios and
    the number of planned and unplanned buffers, with the reason each
    unplanned buffer stays a malloc. With `json=PATH` it also writes the
    whole plan (every buffer's size, offset, lifetime and writer) as JSON,
    which `scripts/memory_picture.py` draws. The IR is not changed.

    The pipeline `paddle-memory-report` runs the CPU pipeline up to
    `paddle-plan-memory` and then this pass:
    `paddle-opt model.mlir --paddle-memory-report -o /dev/null`.
  }];
  let options = [Option<"json", "json", "std::string", "\"\"",
                        "Also write the plan as JSON to this file">];
}

def AutodiffPass : Pass<"paddle-autodiff", "::mlir::ModuleOp"> {
  let summary = "Build reverse-mode gradient (VJP) functions on request.";
  let description = [{
    A request is a private function declaration carrying `paddle.vjp_of`
    (the function to differentiate, `@f`) and `paddle.wrt` (the indices of
    the arguments of `@f` to differentiate with respect to). Its type is
    `@f`'s arguments followed by one cotangent per result of `@f` (same
    types), returning `@f`'s results followed by one gradient per `wrt`
    argument (the argument's type). The pass gives each request a body: the
    computation of `@f`, cloned, followed by the reverse sweep, where each
    op's gradient rule (`PaddleGradientOpInterface`) turns the cotangents of
    its results into gradients of its operands. Gradients of a value used
    several times are summed; arguments no result depends on get zeros.
    The request then becomes an ordinary private function; `@f` stays.

    `@f` must be one block of ops without calls (run `--inline` first). Only
    floating-point tensors are differentiated: integer and boolean values
    stop gradients, so cotangents of such results are ignored. A request may
    differentiate another request (grad-of-grad); requests are built in
    dependency order. Errors name the op and its location, for example an op
    on the differentiated path that has no gradient rule.

    ```mlir
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = paddle.tanh %x : tensor<3xf32> -> tensor<3xf32>
      return %y : tensor<3xf32>
    }
    func.func private @f_vjp(tensor<3xf32>, tensor<3xf32>)
        -> (tensor<3xf32>, tensor<3xf32>)
        attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 0>}
    ```
    gives `@f_vjp` a body returning `tanh(x)` and `ct * (1 - tanh(x)^2)`.
  }];
  let dependentDialects = ["::mlir::paddle::PaddleDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DonateBuffersPass : Pass<"paddle-donate-buffers", "::mlir::ModuleOp"> {
  let summary = "Write results into donated argument buffers.";
  let description = [{
    An argument with `paddle.aliasing_output = N : i64` donates its buffer to
    result N (as JAX's donated arguments do): a training step updates its
    parameters in place instead of allocating new ones. Runs on tensors,
    before one-shot bufferization: result N is materialized in the donated
    argument (`bufferization.materialize_in_destination`), the argument is
    marked `bufferization.writable = true`, and every other argument
    `bufferization.writable = false`, so that no kernel ever writes into a
    caller's input it was not given. The function records the donated results
    in `paddle.donated_results`; `paddle-drop-donated-results` removes them
    after bufferization, so the compiled function returns the other results
    only. A donated argument must have a static shape and the type of its
    result, and each result can be donated to once; violations are errors on
    the function.

    ```mlir
    func.func @step(%w: tensor<4xf32> {paddle.aliasing_output = 0 : i64},
                    %g: tensor<4xf32>) -> tensor<4xf32> {
      %new = paddle.sub %w, %g : ...
      return %new : tensor<4xf32>
    }
    ```
    becomes (before bufferization)
    ```mlir
    func.func @step(%w: tensor<4xf32> {bufferization.writable = true, ...},
                    %g: tensor<4xf32> {bufferization.writable = false})
        -> tensor<4xf32> attributes {paddle.donated_results = array<i64: 0>} {
      %new = paddle.sub %w, %g : ...
      %0 = bufferization.materialize_in_destination %new in %w : ...
      return %0 : tensor<4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def DropDonatedResultsPass
    : Pass<"paddle-drop-donated-results", "::mlir::ModuleOp"> {
  let summary = "Remove the results that were written into donated buffers.";
  let description = [{
    Runs after one-shot bufferization, on the functions that
    `paddle-donate-buffers` rewrote: each result listed in
    `paddle.donated_results` is, by then, the donated argument's own buffer;
    the pass removes it from the return and the function type. The caller
    (the runtime's signature, see `FunctionSignature::aliases`) knows that the
    argument now holds that result.
  }];
}

def ForallToParallelPass
    : Pass<"paddle-forall-to-parallel", "::mlir::func::FuncOp"> {
  let summary = "Upstream's scf.forall -> scf.parallel conversion, keeping "
                "the loop's paddle.* attributes.";
  let description = [{
    Runs after one-shot bufferization, in place of `scf-forall-to-parallel`
    (which makes a new loop without the old one's attributes). A loop's
    `paddle.min_task_size` (set by `paddle-lower-fusion` on a fused group's
    tile loop: one tile is a task worth starting) reaches
    `paddle-async-parallel-for` this way; without it the default minimum of
    iterations per block (`min-task-size`, which counts elements) ran a loop
    of 32 row tiles on one thread.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def TileAndVectorizePass
    : Pass<"paddle-tile-and-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Tile f32 matmuls, elementwise ops and row reductions into "
                "vectorized loops.";
  let description = [{
    Runs on bufferized linalg, before `convert-linalg-to-parallel-loops`.
    Takes the ops whose shapes are static and whose operands are all f32
    (matmul inputs may also be bf16, from `--precision bf16`: they are
    extended to f32 in registers); every other linalg op is left for the
    scalar path.

    - `linalg.matmul` / `linalg.batch_matmul`: row blocks of the output (and
      batches) become the iterations of one `scf.parallel` (multi-threaded
      by `paddle-async-parallel-for`), each loops over column blocks, K
      panels and register tiles of `MR x NR` (8x32 for the target's
      `vector_bits = 512`, 4x16 for 256; `paddle.target`), with the k loop innermost. The register tile is vectorized
      (`linalg::vectorize`), its accumulator read and write are hoisted out of
      the k loop, and `vector.contract` becomes broadcasts and FMAs on
      rows of the accumulator. The tile sizes must divide the shape; shapes
      where no register tile does are left alone.
    - Elementwise `linalg.generic` (all dims parallel, no transposed operand):
      one `scf.parallel` over vectors of 16 (or 8, 4) along the innermost dim.
      A per-row value read at a constant index (`(d0, 0)` of a `Rx1` buffer)
      is read through a rank-reduced subview, as a broadcast.
    - Row reductions (`linalg.generic` whose innermost dim is its only
      reduction dim, with an add/mul/max/min combiner): rows over an
      `scf.parallel` (an `scf.for` inside a fused group's tile loop), each
      row reduced into a vector accumulator of up to 4 vectors lanewise,
      with one `vector.reduction` at the end of the row. The row length
      must be a multiple of 4 (the widest vector of up to 4x the register
      width that divides it is used). f32 sums are reassociated.
    - `math.exp` on vectors becomes upstream's polynomial approximation.

    Each output element is still computed by one loop iteration in the order
    of the k loop, so results do not depend on the thread count.

    ```mlir
    linalg.matmul ins(%a, %b : memref<512x512xf32>, memref<512x512xf32>)
                  outs(%c : memref<512x512xf32>)
    ```
    becomes
    ```mlir
    scf.parallel (%i0) = ... step (%c64) {
      scf.for %j0 = ... step %c128 { scf.for %k0 = ... step %c256 {
        scf.for %i = ... step %c8 {
          scf.for %j = ... step %c32 {
            %acc = vector.load ... : vector<32xf32>   // x8
            %r = scf.for %k = ... iter_args(...) {
              %b = vector.load ...                      // B row
              %a = vector.broadcast ...                 // A element
              %f = vector.fma %a, %b, %acc ...          // x8
            }
            vector.store ...
    } } } } {paddle.min_task_size = 1 : i64}
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::paddle::PaddleDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def AsyncParallelForPass
    : Pass<"paddle-async-parallel-for", "::mlir::ModuleOp"> {
  let summary = "async-parallel-for with a per-loop minimum task size.";
  let description = [{
    Upstream `async-parallel-for` (the same patterns and options), except
    that an `scf.parallel` carrying `paddle.min_task_size = N : i64` uses N
    as its minimum block size instead of `min-task-size`. Loops whose
    iterations are large (a tile of a matmul made by
    `paddle-tile-and-vectorize`) set it low so that a few iterations still
    spread over the threads; plain element loops keep the option's value.

    The minimum is also rounded the way upstream rounds a block size for a
    loop with static inner dims (to a multiple of their iterations), and is
    at least the block size upstream would choose. Upstream (LLVM 22) keeps
    the block count of the unrounded size, so without this the last blocks
    start past the end, wrap around and run rows twice: wrong results for a
    loop that accumulates into its output, wasted work for the others.
  }];
  let options = [
    Option<"asyncDispatch", "async-dispatch", "bool", /*default=*/"true",
           "Dispatch the blocks recursively from the workers">,
    Option<"numWorkerThreads", "num-workers", "int32_t", /*default=*/"-1",
           "Worker count (-1: ask the runtime when the loop runs)">,
    Option<"minTaskSize", "min-task-size", "int32_t", /*default=*/"32768",
           "Minimum iterations per block for loops without "
           "paddle.min_task_size">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::async::AsyncDialect",
                           "::mlir::func::FuncDialect"];
}

def DedupFunctionsPass : Pass<"paddle-dedup-functions", "::mlir::ModuleOp"> {
  let summary = "Keep one of each set of equal private functions.";
  let description = [{
    Compile time (docs/compile-time.md). The kernels of a model outline to
    private functions (async-parallel-for's compute and dispatch functions,
    the coroutines of async.execute); repeated blocks of a model (the same
    op on the same shapes) make equal ones, which LLVM would otherwise
    optimize and compile once each. Unlike upstream
    `duplicate-function-elimination`, two functions that call themselves
    (the recursive dispatch functions) are equal when they differ only in
    their own name; and merging callees, which makes their callers equal,
    repeats until nothing changes. The first function of each set stays,
    the others are erased and every reference to them is redirected.

    ```mlir
    func.func private @f(%x: f32) -> f32 { ... call @f ... }
    func.func private @f_0(%x: f32) -> f32 { ... call @f_0 ... }  // same body
    func.func @main(...) { call @f(...) call @f_0(...) }
    ```
    becomes
    ```mlir
    func.func private @f(%x: f32) -> f32 { ... call @f ... }
    func.func @main(...) { call @f(...) call @f(...) }
    ```
  }];
}

def FlattenConstantGlobalsPass
    : Pass<"paddle-flatten-constant-globals", "::mlir::ModuleOp"> {
  let summary = "Store constant memref.globals as flat byte arrays.";
  let description = [{
    Compile time of models with large weights (docs/compile-time.md).
    Translation to LLVM IR turns a rank-N constant into nested LLVM arrays:
    one uniqued `ConstantDataArray` per innermost row (3 floats for a 3x3
    kernel) and one uniqued `ConstantArray` per outer row, millions of
    constants for a ResNet; and the code generator writes a float array one
    element at a time. A flat `i8` array is one constant, which the code
    generator writes as one block of bytes.

    Each private constant `memref.global` with a non-splat dense initial
    value of static shape, identity layout and an int or float element type
    of whole bytes becomes a 1-D `i8` global holding the same bytes (the
    raw data of the attribute: no reordering, so numerics are unchanged),
    aligned at least as its element type needs and at least 16 bytes; each
    `memref.get_global` of it becomes a `memref.view` of the byte global
    with the original type. Run on buffers, after passes that look for
    weights through `memref.get_global` of the original type
    (paddle-use-onednn), before `memref` is lowered to LLVM.

    ```mlir
    memref.global "private" constant @w : memref<2x3xf32> = dense<...>
        {alignment = 64 : i64}
    %w = memref.get_global @w : memref<2x3xf32>
    ```
    becomes
    ```mlir
    memref.global "private" constant @w : memref<24xi8> = dense<...>
        {alignment = 64 : i64}
    %c0 = arith.constant 0 : index
    %bytes = memref.get_global @w : memref<24xi8>
    %w = memref.view %bytes[%c0][] : memref<24xi8> to memref<2x3xf32>
    ```

    With `max-bytes=N` only globals of at most N bytes are flattened. The
    JIT sets it below the size from which it moves constants out of the
    module before translation (lib/Execution/Jit.cpp): those are never
    translated, and flattening them only copied them (0.08 s for
    ResNet-50's 100 MB, 0.26 s for BERT-base's 440 MB).
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"0",
           "Flatten only globals of at most this many bytes (0: all)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def UseOneDnnPass : Pass<"paddle-use-onednn", "::mlir::ModuleOp"> {
  let summary = "Run large f32 matmuls, convolutions and max poolings "
                "through oneDNN.";
  let description = [{
    The library path of the CPU pipeline (docs/onednn.md). Runs on buffers,
    after memory planning. Replaces f32 matmuls and 2-D convolutions that are
    large enough by calls to the runtime's oneDNN kernels
    (paddle_runtime/onednn.h, declared with `llvm.emit_c_interface`):

    - `linalg.matmul`, `linalg.batch_matmul` and `linalg.generic`
      contractions (`out + a * b`, one reduction loop; what elementwise
      fusion makes of batched, broadcast or transposed matmuls) become
      `paddle_onednn_matmul` on unranked memrefs plus, per operand, the
      memref dim of each logical dim (a: batch..., m, k; b: batch..., k, n;
      c: batch..., m, n) packed 4 bits per dim, 0 for a broadcast dim;
    - `linalg.conv_2d_nchw_fchw` and `linalg.conv_2d_ngchw_gfchw` become
      `paddle_onednn_conv2d(_grouped)` on dynamic strided memrefs plus
      strides and dilations;
    - `linalg.pooling_nchw_max` with unit dilations whose output a
      `linalg.fill` of -inf initializes right before it becomes
      `paddle_onednn_max_pool2d` (input, output, kernel, strides, padding);
      the fill goes. The lowering's -inf padding copy (a generic marked
      `paddle.max_pool_pad`) folds into the call's padding as a conv's zero
      padding does.

    Operands must be f32 memrefs with a unit innermost stride (for the
    grouped conv, contiguous group and channel dims); other ops stay. A
    matmul or conv whose two inputs are bf16 and whose output is f32 (the
    body extends the inputs with `arith.extf`; `--precision bf16`) calls
    the `_bf16` variant of its kernel instead, with bf16 memrefs for the
    inputs (docs/bf16.md).

    linalg ops accumulate into their output. When the op right before it
    (ignoring trace calls and ops without memory effects) is a
    `linalg.fill` of zero into the same buffer, the fill is dropped and the
    kernel overwrites the output (accumulate = 0); otherwise oneDNN adds to
    it (a sum post-op).

    Every call also takes four unranked f32 extra operands, an i64 state
    word (a mutable global per call site) and a post-op program (a
    constant i64 global; onednn.h). With `fuse`, an elementwise
    `linalg.generic` that is the only reader of a zero-initialized result
    and whose body is a chain oneDNN post-ops express (per-channel bias,
    scale, shift; scalar affine; relu, clamp, tanh, sigmoid, gelu; a
    residual sum) is folded into the call, which then writes the generic's
    output (docs/onednn.md, "Fused post-ops"). Constant-global weights set
    the program's flag, and the runtime reorders them once per module.

    With `channels-last`, activations that only conv and pooling calls use
    (through the grouped form's reshapes), whole-buffer copies, fills and
    generics that map them by the identity are stored NHWC:
    the calls take `memref.reinterpret_cast` views with NHWC strides, the
    layout oneDNN's convolutions pick, so they skip per-call reorders; a
    copy between an NHWC and a plain buffer becomes
    `paddle_onednn_reorder`; such a generic (a global average pool) reads
    [N, H, W, C] views with its loops in that order (docs/onednn.md,
    "Channels-last activations").

    With `fuse-depthwise`, a depthwise 3x3 conv call (padding 1, stride 1
    or 2, a bias and eltwise post-ops) whose input only a 1x1 conv call
    (unit strides, no padding, a bias and eltwise post-ops) writes, and
    nothing else reads, folds into that call as a depthwise post-op: the
    runtime runs the two convs a strip of rows at a time through a buffer
    that stays in L2, so the 1x1 result is not written out to memory and
    read back (MobileNet's expand and depthwise convs; docs/onednn.md,
    "Depthwise fusion").

    With `winograd`, a non-grouped 3x3 conv with stride and dilation 1 and
    at least 64 input and output channels sets program flag bit 1: the
    runtime uses oneDNN's Winograd kernel where it has one.

    Which ops are worth a call is the module's target's (`paddle.target`)
    to say: with `library = none` none, with `library = onednn` every
    supported op; with `auto` those the cost model predicts faster in
    oneDNN than in our generated code on the target's device
    (docs/onednn.md, "Choosing"): oneDNN costs
    its call overhead, a roofline at its efficiency and, for convolutions,
    the per-call layout reorders of activations and non-constant weights;
    our code a roofline at the efficiency of the tiled kernel (matmuls
    paddle-tile-and-vectorize takes, with `tile-and-vectorize` as in the
    pipeline and the target's `vector_bits`) or of scalar loops (poolings: one
    operation per window element), plus the padding copies and fills that
    only our code needs. Both
    efficiencies and the overhead come from the device spec ("onednn",
    "codegen"; docs/cost-model.md); a spec without "onednn" (GPUs) keeps
    every op on our code. Dynamic dims count as 1.

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<256x256xf32>)
    linalg.matmul ins(%a, %b : memref<256x512xf32>, memref<512x256xf32>)
                  outs(%c : memref<256x256xf32>)
    ```
    becomes
    ```mlir
    %0 = memref.cast %a : memref<256x512xf32> to memref<*xf32>
    ...
    %map = arith.constant 33 : i64     // logical dims 0, 1 = memref dims 0, 1
    %acc = arith.constant 0 : i64
    call @paddle_onednn_matmul(%0, %1, %2, %map, %map, %map, %acc)
        : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64) -> ()
    ```
  }];
  let options = [
    Option<"fuse", "fuse", "bool", "true",
           "Fuse an elementwise linalg.generic reading the result into the "
           "call as oneDNN post-ops">,
    Option<"tileAndVectorize", "tile-and-vectorize", "bool", "true",
           "Whether the pipeline tiles and vectorizes static f32 matmuls "
           "(paddle-tile-and-vectorize): selects the codegen efficiency">,
    Option<"winograd", "winograd", "bool", "true",
           "Let oneDNN run 3x3 stride-1 convs with at least 64 input and "
           "output channels as Winograd (program flag bit 1)">,
    Option<"channelsLast", "channels-last", "bool", "true",
           "Store activations that only oneDNN convolutions and poolings "
           "read and write channels-last (NHWC)">,
    Option<"fuseDepthwise", "fuse-depthwise", "bool", "true",
           "Fold a depthwise 3x3 conv call that alone reads a 1x1 conv "
           "call's result into that call (a depthwise post-op)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::paddle::PaddleDialect"];
}

def SimplifyPass : Pass<"paddle-simplify", "::mlir::func::FuncOp"> {
  let summary = "Layout and scalar rewrites on paddle ops before fusion.";
  let description = [{
    Rewrites that leave fewer or smaller kernels, with the paddle ops'
    folders (transpose(transpose) composes, reshape(reshape) merges, small
    constants fold):

    - `gather(transpose(x), i)` with a constant scalar index `i`, when every
      user of the transpose is such a gather, becomes
      `transpose(gather(x, i))` on the matching axis of `x`: the gathers are
      views of `x` and each transpose moves only its slice;
    - a transpose that keeps the order of the dims of size other than 1
      becomes a reshape (a view);
    - `transpose(reshape(transpose(y)))` where the reshape only adds or
      drops unit dims becomes `reshape(transpose(y))`, one transpose;
    - `matmul(a * s, b)` and `matmul(a, b * s)` with a one-element `s`,
      where `a` is an argument or comes from an op that only moves data
      (so that the scale is a kernel of its own) and `a * s` has no other
      user, become
      `matmul(a, b) * s`, a matmul epilogue (a oneDNN post-op or a fused
      loop); after an elementwise op or a matmul the scale is already free
      in that op's group or epilogue and stays (GELU's 0.5). And
      `(x * s) * t` with one-element `s` and `t` becomes `x * (s * t)`.
      Scaling after the products rounds differently from scaling before:
      the results agree to float rounding, not bit for bit.

    ONNX exports of attention (BERT, GPT-2) pick q, k and v out of the QKV
    projection with a transpose and three gathers, transpose k twice around
    a unit-dim reshape, and scale q and k by `1/sqrt(sqrt(d))` each: after
    this pass q, k and v are views of the projection, each moved by one
    transpose, and the scores carry one scale.

    ```mlir
    %t = paddle.transpose %x perm = [1, 0, 2] : tensor<4x3x8xf32> -> tensor<3x4x8xf32>
    %q = paddle.gather %t, %c0 axis = 0 : tensor<3x4x8xf32>, tensor<i64> -> tensor<4x8xf32>
    ```
    becomes
    ```mlir
    %g = paddle.gather %x, %c0 axis = 1 : tensor<4x3x8xf32>, tensor<i64> -> tensor<4x8xf32>
    ```
    (the remaining transpose moves no dims and folds).
  }];
  let dependentDialects = ["::mlir::paddle::PaddleDialect"];
}

def FusePass : Pass<"paddle-fuse", "::mlir::func::FuncOp"> {
  let summary = "Group paddle ops into fused kernels, decided by the cost model.";
  let description = [{
    Wraps each group of ops that should run as one kernel in a
    `paddle.fusion` op (kinds: `elementwise`, `reduction`, `softmax`,
    `layer_norm`, `matmul`, `conv`). Ops are visited from the last to the
    first; an op joins the group of its users when all of its users are in
    that one group and

    - it is an elementwise or broadcast op, or a reduction, softmax,
      log_softmax or layer_norm whose reduced input has the shape of the
      group's other reductions (row-wise work over the same rows), or a
      matmul/conv2d joining a group of elementwise ops (its epilogue: bias,
      activation, residual);
    - it would not be a prologue of a matmul/conv (those read their operands
      from memory), and a group holds at most one matmul/conv and never a
      matmul/conv together with a reduction;
    - the cost model finds it profitable on the device of the module's
      target (`paddle.target`): where a user reads the
      op's result broadcast (a smaller tensor stretched over a larger
      iteration space), the fused code recomputes the op once per element of
      that space; the op joins only if the predicted time of the extra
      FLOPs is at most the predicted time of the memory traffic the fusion
      saves (the op's result written once and read by each user).

    An op with users outside the group (or returned) is never duplicated
    into it; it stays the end of its own group. Small constants (at most 64
    elements) are copied into the groups that read them; larger ones are
    inputs. Groups with a single kernel op are left as they are. Because
    members join only through their users, every group is convex and the
    group's last op is its only result.

    `paddle-lower-fusion` lowers the groups after
    `paddle-convert-paddle-to-linalg`; docs/fusion.md has both.
  }];
  let dependentDialects = ["::mlir::paddle::PaddleDialect"];
}

def LowerFusionPass : Pass<"paddle-lower-fusion", "::mlir::func::FuncOp"> {
  let summary = "Lower paddle.fusion groups (on linalg) to fused loops.";
  let description = [{
    Runs after `paddle-convert-paddle-to-linalg`, when the body of each
    `paddle.fusion` op is linalg on tensors. Inside each group it folds unit
    dims and fuses elementwise producers into consumers (upstream
    patterns; the group's boundary keeps them from reaching outside). A group
    that still holds more than one linalg op and contains a reduction is
    then tiled at its last op along the dims that every reduction in it
    keeps (rows), with the rest of the group fused into the tile loop
    (upstream tile-and-fuse, an `scf.forall`): each tile computes its rows'
    reductions and their consumers while the rows are in cache (also when
    the group's result comes back through a reshape, as unit-dim folding
    leaves it). Finally the group's body replaces the op. Outside the
    groups, a `tensor.empty` or `linalg.fill` that CSE made the init of
    several ops is cloned for each of them, so each writes its own buffer
    instead of bufferization copying the shared value.
  }];
  let options = [
    Option<"tileElements", "tile-elements", "int64_t", /*default=*/"4096",
           "Aim for tiles of about this many elements of the last op">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def ConvertPrecisionPass
    : Pass<"paddle-convert-precision", "::mlir::ModuleOp"> {
  let summary = "Run f32 matmuls and convolutions on bf16 inputs with f32 "
                "accumulation.";
  let description = [{
    The opt-in reduced-precision mode (`--precision bf16`, docs/bf16.md),
    taken when the module's target (`paddle.target`) says
    `precision = bf16`.
    Each `paddle.matmul` and `paddle.conv2d` whose operands and result are
    f32, depthwise convolutions (one input channel per group) aside, reads
    its operands rounded to bf16 (round to nearest even) and keeps its f32
    result: the products are exact in f32 and accumulate in f32,
    the contract of AMX's `TDPBF16PS` and of oneDNN's bf16 primitives. Every
    other op stays f32.

    A constant operand (a `paddle.constant`, possibly behind
    `paddle.transpose` / `paddle.reshape` / `paddle.broadcast_to`) becomes a
    bf16 constant here, once, at compile time; other operands get a
    `paddle.cast` to bf16 right after their definition, shared by all the
    ops that read them. With `precision = f32` the pass changes nothing.

    ```mlir
    %w = paddle.constant dense<...> : tensor<64x32xf32>
    %r = paddle.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32>
        -> tensor<8x32xf32>
    ```
    becomes
    ```mlir
    %x16 = paddle.cast %x : tensor<8x64xf32> -> tensor<8x64xbf16>
    %w16 = paddle.constant dense<...> : tensor<64x32xbf16>
    %r = paddle.matmul %x16, %w16 : tensor<8x64xbf16>, tensor<64x32xbf16>
        -> tensor<8x32xf32>
    ```
  }];
  let dependentDialects = ["::mlir::paddle::PaddleDialect"];
}

#endif // PADDLE_TRANSFORMS_PASSES_TD
