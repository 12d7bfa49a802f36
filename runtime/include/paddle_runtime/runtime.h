/*===- runtime.h - the Paddle-MLIR runtime C API ------------------*- C -*-===*
 *
 * A C API with status returns and zero-initializable structs. It has no
 * LLVM/MLIR dependency: the JIT (paddle-run) and ahead-of-time artifacts
 * call compiled functions through it the same way.
 *
 * Calling convention. A compiled function F is reached through a packed
 * entry point `void F_packed(void **args)`: args[i] points to the i-th scalar
 * of the flattened argument list and the last entry points to storage for the
 * results. Each tensor argument of rank R is flattened into its memref
 * descriptor fields: allocated pointer, aligned pointer, offset, R sizes, R
 * strides. Results come back as the same descriptors, one after another;
 * their buffers are allocated by the compiled code (aligned, so that the
 * allocated and aligned pointers are the same) and belong to the caller:
 * paddle_invoke adopts a dense buffer that one result owns alone (no copy)
 * and copies any other result out before freeing it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef PADDLE_RUNTIME_RUNTIME_H
#define PADDLE_RUNTIME_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PADDLE_MAX_RANK 16

/*===--- Status
 * ------------------------------------------------------------===*/

typedef enum paddle_status_code {
  PADDLE_OK = 0,
  PADDLE_INVALID_ARGUMENT = 1,
  PADDLE_NOT_FOUND = 2,
  PADDLE_IO_ERROR = 3,
  PADDLE_OUT_OF_MEMORY = 4,
  PADDLE_UNSUPPORTED = 5,
  PADDLE_INTERNAL = 6,
  /* A wait ran past its timeout (a collective whose peers did not arrive). */
  PADDLE_DEADLINE_EXCEEDED = 7,
  /* Another party failed and gave up (a rank that called paddle_comm_abort). */
  PADDLE_ABORTED = 8,
} paddle_status_code_t;

/* NULL means success; any other status must be freed with paddle_status_free.
 */
typedef struct paddle_status_s *paddle_status_t;

paddle_status_t paddle_status_create(paddle_status_code_t code,
                                     const char *format, ...);
paddle_status_code_t paddle_status_code(paddle_status_t status);
const char *paddle_status_message(paddle_status_t status);
void paddle_status_free(paddle_status_t status);

/*===--- Element types and tensors ----------------------------------------===*/

typedef enum paddle_dtype {
  PADDLE_DTYPE_INVALID = 0,
  PADDLE_F32,
  PADDLE_F16,
  PADDLE_BF16,
  PADDLE_F64,
  PADDLE_I1,
  PADDLE_I8,
  PADDLE_I32,
  PADDLE_I64,
} paddle_dtype_t;

/* Bytes per element (i1 takes one byte); 0 for an invalid dtype. */
size_t paddle_dtype_size(paddle_dtype_t dtype);
/* MLIR spelling: "f32", "i1", ... */
const char *paddle_dtype_name(paddle_dtype_t dtype);

/* A tensor view. `data` is owned by whoever allocated it;
 * paddle_tensor_alloc'd tensors are released with paddle_tensor_free.
 * `strides` (in elements, one per dim; any sign, 0 for a broadcast dim)
 * describes a strided view of someone else's memory, such as a transposed
 * or sliced NumPy array; null means dense row-major. Inputs of
 * paddle_invoke and paddle_session_run may be strided (the runtime packs
 * them into dense buffers for the call); every other function, and every
 * result, is dense. */
typedef struct paddle_tensor {
  paddle_dtype_t dtype;
  int32_t rank;
  int64_t shape[PADDLE_MAX_RANK];
  void *data;
  const int64_t *strides;
} paddle_tensor_t;

int64_t paddle_tensor_num_elements(const paddle_tensor_t *tensor);
paddle_status_t paddle_tensor_alloc(paddle_tensor_t *tensor,
                                    paddle_dtype_t dtype, int32_t rank,
                                    const int64_t *shape);
void paddle_tensor_free(paddle_tensor_t *tensor);

/*===--- Function signatures and calls ------------------------------------===*/

#define PADDLE_DYNAMIC_DIM (-1)

/* A tensor type: shape entries are sizes or PADDLE_DYNAMIC_DIM. */
typedef struct paddle_tensor_spec {
  paddle_dtype_t dtype;
  int32_t rank;
  int64_t shape[PADDLE_MAX_RANK];
} paddle_tensor_spec_t;

/* The most axes a device mesh has. */
#define PADDLE_MAX_MESH_RANK 4

/* How a tensor of an SPMD function is split over the mesh: for each tensor
 * dim, the mesh axes that split it, the major one first, ended by -1 where
 * fewer than PADDLE_MAX_MESH_RANK (all -1: the dim is whole on every
 * device). A mesh axis that splits no dim replicates the tensor over it.
 * Splits are even: the dim's size is a multiple of the product of its
 * axes' sizes. */
typedef struct paddle_tensor_sharding {
  int8_t split[PADDLE_MAX_RANK][PADDLE_MAX_MESH_RANK];
} paddle_tensor_sharding_t;

/* What makes a function SPMD: the mesh it was partitioned for and how each
 * input and output is split. The function's `inputs` and `outputs` specs
 * are then the per-device (local) types; the global type of a tensor is
 * its local type with each split dim multiplied by its axes' sizes. */
typedef struct paddle_spmd_signature {
  int32_t mesh_rank;
  int64_t mesh_shape[PADDLE_MAX_MESH_RANK];
  const paddle_tensor_sharding_t *inputs;  /* num_inputs of them */
  const paddle_tensor_sharding_t *outputs; /* num_outputs of them */
} paddle_spmd_signature_t;

typedef struct paddle_function_signature {
  const char *name;
  int32_t num_inputs;
  const paddle_tensor_spec_t *inputs;
  int32_t num_outputs;
  const paddle_tensor_spec_t *outputs;
  /* NULL for a one-device function. */
  const paddle_spmd_signature_t *spmd;
} paddle_function_signature_t;

typedef void (*paddle_packed_fn_t)(void **args);

/* Checks `inputs` against `signature` (count, dtype, rank, static sizes),
 * calls `fn` and fills `outputs` (signature->num_outputs of them) with
 * freshly allocated tensors that the caller frees with paddle_tensor_free.
 * On error nothing is allocated in `outputs`. */
paddle_status_t paddle_invoke(paddle_packed_fn_t fn,
                              const paddle_function_signature_t *signature,
                              const paddle_tensor_t *inputs, int32_t num_inputs,
                              paddle_tensor_t *outputs);

/* How many results paddle_invoke has copied out instead of adopting their
 * buffers, in this process (views, shared or borrowed buffers). */
int64_t paddle_invoke_copied_results(void);

/* Called by compiled code when a run-time check fails (for example two
 * dynamic dims that must agree do not). Inside paddle_invoke it ends the call,
 * which then returns PADDLE_INVALID_ARGUMENT with `message`; buffers the call
 * had allocated are not freed. Outside paddle_invoke it prints and aborts. */
void paddle_runtime_check_failed(const char *message);

/* Ends the innermost paddle_invoke on this thread, which then returns a
 * status with `code` and `message` (copied). For the runtime functions that
 * compiled code calls (a failed check, an allocation over the limit). Outside
 * paddle_invoke on this thread, which includes every worker thread of the
 * thread pool (see "Threads"), it prints the message and aborts. */
void paddle_runtime_fail(paddle_status_code_t code, const char *message);

/* Copies between two strided views, for compiled code: the implementation
 * of MLIR's `memrefCopy` (arguments are MLIR unranked memref descriptors),
 * which the JIT and AOT artifacts bind to this function. */
void paddle_memref_copy(int64_t element_size, const void *source,
                        const void *target);

/* A runtime function that compiled code calls. `name` is the symbol the
 * compiled code refers to (which may be an upstream MLIR name such as
 * `memrefCopy`), `runtime_name` the function this library exports for it.
 * The JIT binds `name` to `address`; paddle-compile renames references to
 * `name` into `runtime_name` and links this library. */
typedef struct paddle_runtime_symbol {
  const char *name;
  const char *runtime_name;
  void *address;
} paddle_runtime_symbol_t;

/* Every such function; `*count` receives the number of entries. */
const paddle_runtime_symbol_t *paddle_runtime_symbols(int32_t *count);

/*===--- Threads ----------------------------------------------------------===*/

/* Compiled code runs the parallel loops of each op (elementwise ops, the
 * parallel dims of reductions and matmuls) on a pool of worker threads; the
 * calling thread runs one block of each loop itself and then waits for the
 * rest. Loops with fewer iterations than the pipeline's minimum task size run
 * serially on the calling thread. The async ABI the compiled code uses is in
 * paddle_runtime/async.h.
 *
 * The number of threads is, in this order: the last paddle_set_num_threads,
 * the environment variable PADDLE_NUM_THREADS, or
 * std::thread::hardware_concurrency(). With 1 thread nothing is started and
 * everything runs on the calling thread. Results do not depend on the
 * number of threads: every output element, and every reduction along a
 * parallel dim, is computed by one thread in the same order.
 *
 * Run-time checks (paddle_runtime_fail) are evaluated outside the parallel
 * loops, on the thread that called paddle_invoke. Should paddle_runtime_fail
 * ever be called on a worker thread, it prints the message and aborts (it
 * cannot unwind to a paddle_invoke on another thread). */

/* Sets the number of threads (1 to 4096; PADDLE_INVALID_ARGUMENT otherwise,
 * or when called on a worker thread). Call it while no compiled function
 * runs: it waits for the old workers to finish their queued work. */
paddle_status_t paddle_set_num_threads(int32_t n);
/* The number of threads compiled code uses (see above). */
int32_t paddle_get_num_threads(void);
/* Measures what a parallel loop costs beyond its work: the median time, over
 * `repetitions` rounds (1 to 1e6), of submitting one empty task per thread to
 * a pool of `threads` workers (1 to 4096) built as compiled code's is, and
 * waiting for all of them. For paddle-calibrate's call overhead. */
paddle_status_t paddle_measure_fork_join(int32_t threads, int32_t repetitions,
                                         double *median_seconds);

/*===--- Compiled modules -------------------------------------------------===*/

/* A function exported by a module compiled ahead of time. */
typedef struct paddle_exported_function {
  const paddle_function_signature_t *signature;
  paddle_packed_fn_t entry;
} paddle_exported_function_t;

/* Loads a module's weights from a file (paddle_module_load_weights of an
 * artifact compiled with --weights sidecar); NULL `path` means the default. */
typedef paddle_status_t (*paddle_load_weights_fn_t)(const char *path);

/* Parses a byte count: digits with an optional K, M or G suffix (powers of
 * 1024). Returns 0 on success, -1 for anything else (or an overflow). */
int paddle_parse_byte_count(const char *text, int64_t *bytes);

/*===--- Weights files (paddle-compile --weights sidecar) -----------------===*/

/* Where a compiled module keeps one weight: `size` writable bytes at `data`.
 * The layout matches the module's exported `paddle_weights_table`. */
typedef struct paddle_weight_slot {
  void *data;
  uint64_t size;
} paddle_weight_slot_t;

/* The format version this runtime reads (docs/weights-format.md). */
#define PADDLE_WEIGHTS_VERSION 1

/* Validates a weights file image completely (magic, version, sizes and
 * offsets, checksum, fingerprint, entry count and every entry's size against
 * `slots`) and only then copies entry i into slots[i]. On error the slots
 * are left untouched. */
paddle_status_t paddle_weights_parse(const void *bytes, size_t size,
                                     uint64_t expected_fingerprint,
                                     const paddle_weight_slot_t *slots,
                                     int32_t count);
/* Reads the file at `path` and parses it as paddle_weights_parse does. */
paddle_status_t paddle_weights_load(const char *path,
                                    uint64_t expected_fingerprint,
                                    const paddle_weight_slot_t *slots,
                                    int32_t count);

/*===--- Devices ----------------------------------------------------------===*/

/* Where buffers live and kernels run. The CPU device is always there; other
 * kinds (CUDA) plug in behind the same interface and report
 * PADDLE_UNSUPPORTED from paddle_device_create in builds without them. */
typedef enum paddle_device_kind {
  PADDLE_DEVICE_CPU = 0,
  PADDLE_DEVICE_CUDA = 1,
} paddle_device_kind_t;

typedef struct paddle_device_s *paddle_device_t;

paddle_status_t paddle_device_create(paddle_device_kind_t kind, int32_t ordinal,
                                     paddle_device_t *out);
paddle_device_kind_t paddle_device_kind(paddle_device_t device);
/* For messages and traces: "cpu:0". */
const char *paddle_device_name(paddle_device_t device);
void paddle_device_free(paddle_device_t device);

/*===--- Executables ------------------------------------------------------===*/

/* The functions of a compiled module: from the JIT (paddle_executable_create
 * over its function table) or from a shared object that paddle-compile
 * produced (paddle_executable_load). Both are called the same way. */
typedef struct paddle_executable_s *paddle_executable_t;

/* Wraps `count` functions. `kernel_names` (may be null) names the kernels of
 * a module compiled with kernel instrumentation, by id. `release(user)` is
 * called by paddle_executable_free (the JIT frees its code there). */
paddle_status_t
paddle_executable_create(const paddle_exported_function_t *functions,
                         int32_t count, const char *const *kernel_names,
                         int32_t kernel_count, void (*release)(void *user),
                         void *user, paddle_executable_t *out);

/* dlopens a `paddle-compile --emit so` library and binds the runtime
 * functions its code calls to this runtime. Errors: a missing or unloadable
 * file, a library that is not a paddle module, or one built for another
 * runtime ABI version. */
paddle_status_t paddle_executable_load(const char *path,
                                       paddle_executable_t *out);

/* The checks paddle_executable_load makes on a library's bytes before
 * dlopen: an ELF64 shared object for this machine whose headers and
 * loadable segments lie inside the file (a truncated file would otherwise
 * crash the process inside dlopen). `what` names the file in messages. */
paddle_status_t paddle_check_shared_object(const void *bytes, size_t size,
                                           const char *what);

int32_t paddle_executable_function_count(paddle_executable_t executable);
const paddle_function_signature_t *
paddle_executable_function(paddle_executable_t executable, int32_t index);
/* The index of function `name`; with a null or empty name, the index of the
 * only function (an error when there are several). */
paddle_status_t paddle_executable_find(paddle_executable_t executable,
                                       const char *name, int32_t *index);
void paddle_executable_free(paddle_executable_t executable);

/* The version of the interface between compiled modules and the runtime
 * (the calling convention and the functions compiled code calls). */
#define PADDLE_RUNTIME_ABI_VERSION 2

/* A shared object from paddle-compile exports, besides its function table
 * (paddle_module_functions, paddle_module_function_count):
 *   const int32_t paddle_module_abi_version;
 *   const paddle_module_import_t paddle_module_imports[];
 *   const int32_t paddle_module_import_count;
 * Its compiled code calls the runtime through the import slots, which point
 * to the runtime linked into the library until paddle_executable_load
 * points them to the loading runtime: one runtime (threads, memory limits,
 * traces) serves every module of a process. */
typedef struct paddle_module_import {
  const char *name; /* a runtime_name of paddle_runtime_symbols() */
  void **slot;
} paddle_module_import_t;

/*===--- Command line -----------------------------------------------------===*/

/* paddle-run and the executables of `paddle-compile --emit exe` share one
 * command line for running a function:
 *   PROGRAM [--function F] --input a.npy ... [--output-dir D] [--bench N]
 *           [--threads N] [--concurrency N] [--memory-limit BYTES]
 *           [--trace T.json] [host arguments]
 * paddle_cli_run parses these flags (--flag value or --flag=value), then
 * asks the host for the executable, giving it the arguments it did not
 * take; it reads the inputs, runs the function in a session, checks
 * concurrent runs, benchmarks, and writes the results (all files or none)
 * or prints small ones, and the trace. Counts are bounded (--bench up to
 * 10^7 runs, --concurrency up to 1024 threads, --threads up to 4096). */
typedef struct paddle_cli_run_options {
  /* --trace was given: the executable should record kernel events. */
  int32_t trace;
} paddle_cli_run_options_t;

/* Makes the executable from the arguments the driver left: argv[0] is the
 * program, then in order every argument that is not a run flag. Returns 0
 * with *out set, or prints "PROGRAM: error: ..." to stderr and returns
 * nonzero. With --help among them (after the driver printed its flags) it
 * prints its own part of the usage and returns 0 with *out unset. */
typedef int (*paddle_cli_host_fn_t)(void *user, int argc, char **argv,
                                    const paddle_cli_run_options_t *options,
                                    paddle_executable_t *out);

/* Returns the process exit code: 0, or 1 after a message on stderr. */
int paddle_cli_run(int argc, char **argv, paddle_cli_host_fn_t host,
                   void *user);

/* The main program of `paddle-compile --emit exe` executables:
 * paddle_cli_run over the module's functions. `load_weights` is NULL when
 * the weights are embedded; otherwise the host argument `--weights W`
 * loads them from W before the first call (without it the module loads
 * its default file). `kernel_names` names the kernels of a module compiled
 * with --instrument-kernels (for --trace). */
int paddle_cli_main(int argc, char **argv,
                    const paddle_exported_function_t *functions, int32_t count,
                    paddle_load_weights_fn_t load_weights,
                    const char *const *kernel_names, int32_t kernel_count);

/*===--- Sessions ---------------------------------------------------------===*/

/* Zero-initialized options are the defaults. */
typedef struct paddle_session_options {
  /* Bytes one call may hold at once in its workspace and dynamically sized
   * buffers; 0 means no limit. Exceeding it ends the call with
   * PADDLE_OUT_OF_MEMORY. */
  int64_t memory_limit_bytes;
  /* Record a trace event per call and, for modules compiled with kernel
   * instrumentation, per kernel (see paddle_session_write_trace). */
  int32_t enable_trace;
  /* The device to run on; null means the CPU. */
  paddle_device_t device;
} paddle_session_options_t;

/* A loaded executable ready to run: load once, run many times. Runs from
 * several threads at once are safe; each concurrent call gets its own
 * memory, allocated once and reused by later calls. The executable must
 * outlive the session. */
typedef struct paddle_session_s *paddle_session_t;

paddle_status_t paddle_session_create(paddle_executable_t executable,
                                      const paddle_session_options_t *options,
                                      paddle_session_t *out);
/* Runs function `function_index` like paddle_invoke: checks the inputs,
 * fills `outputs` (num_outputs must equal the function's output count) with
 * tensors the caller frees with paddle_tensor_free. */
paddle_status_t paddle_session_run(paddle_session_t session,
                                   int32_t function_index,
                                   const paddle_tensor_t *inputs,
                                   int32_t num_inputs, paddle_tensor_t *outputs,
                                   int32_t num_outputs);
/* Writes the events recorded so far as Chrome trace JSON (chrome://tracing,
 * ui.perfetto.dev), atomically. */
paddle_status_t paddle_session_write_trace(paddle_session_t session,
                                           const char *path);
/* Memory statistics: the largest number of bytes one call held at once, and
 * the bytes of per-call memory the session keeps for reuse. */
void paddle_session_memory_stats(paddle_session_t session,
                                 int64_t *peak_call_bytes,
                                 int64_t *reserved_bytes);
void paddle_session_free(paddle_session_t session);
/* The executable `session` runs (not owned). */
paddle_executable_t paddle_session_executable(paddle_session_t session);

/* Allocation functions of compiled code (MLIR's generic allocation
 * functions): malloc/free that count against the running call's memory
 * limit and end the call with PADDLE_OUT_OF_MEMORY when over it. */
void *paddle_alloc(size_t size);
void *paddle_aligned_alloc(size_t alignment, size_t size);
void paddle_free(void *pointer);

/* Kernel events of instrumented modules (paddle-instrument-kernels). */
void paddle_trace_kernel_begin(int64_t kernel_id);
void paddle_trace_kernel_end(int64_t kernel_id);

/*===--- .npy files -------------------------------------------------------===*/

/* Reads a NumPy .npy file (format 1.0-3.0, C order, little-endian). */
paddle_status_t paddle_npy_read(const char *path, paddle_tensor_t *out);
/* Parses .npy bytes from memory (what paddle_npy_read does after reading). */
paddle_status_t paddle_npy_parse(const void *bytes, size_t size,
                                 paddle_tensor_t *out);
/* Writes `tensor` as .npy through paddle_output_create: a failed or
 * interrupted write leaves `path` as it was. */
paddle_status_t paddle_npy_write(const char *path,
                                 const paddle_tensor_t *tensor);
/* Writes `count` tensors to `paths[i]`, all or none: every file is written
 * to its temporary name first, and only when all are complete are they
 * published. On error no target has changed. */
paddle_status_t paddle_npy_write_all(const char *const *paths,
                                     const paddle_tensor_t *tensors,
                                     int32_t count);

/*===--- Output files -----------------------------------------------------===*/

/* Every file the runtime and the tools write goes through these, so that no
 * failure, signal or odd target loses data:
 *  - The bytes go to a temporary file. paddle_output_commit publishes them:
 *    a regular file (or a new one) is replaced by a rename in its folder,
 *    so it is either the old file or the whole new one, with the old
 *    file's permissions; a symbolic link is written through.
 *  - A target that exists and is not a regular file (a device node, a
 *    FIFO) is never renamed over, which would replace the node with a
 *    regular file: its temporary file is in $TMPDIR (default /tmp) and
 *    commit copies the bytes into it.
 *  - While a temporary file exists it is registered: SIGINT, SIGTERM,
 *    SIGHUP, SIGQUIT, SIGPIPE and SIGXFSZ remove every registered file
 *    before the signal's previous handler runs (or the process dies of it).
 * Errors name the target and the reason ("Permission denied", "File name
 * too long", "it is a directory"). */
typedef struct paddle_output_s *paddle_output_t;

paddle_status_t paddle_output_create(const char *path, paddle_output_t *out);
/* A registered temporary file with no target (an intermediate file), named
 * with `suffix` in $TMPDIR; paddle_output_discard removes it. */
paddle_status_t paddle_output_create_scratch(const char *suffix,
                                             paddle_output_t *out);
/* The temporary file, for a program that writes it by name (a linker). */
const char *paddle_output_temp_path(paddle_output_t out);
paddle_status_t paddle_output_write(paddle_output_t out, const void *data,
                                    size_t size);
/* Publishes the bytes written (see above) and frees `out`, also on error. */
paddle_status_t paddle_output_commit(paddle_output_t out);
/* Removes the temporary file and frees `out`; NULL is ignored. */
void paddle_output_discard(paddle_output_t out);
/* paddle_output_create, one write and a commit. */
paddle_status_t paddle_write_file(const char *path, const void *data,
                                  size_t size);

#ifdef __cplusplus
}
#endif

#endif /* PADDLE_RUNTIME_RUNTIME_H */
