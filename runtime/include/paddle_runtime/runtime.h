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
 * their buffers are allocated with malloc by the compiled code and belong
 * to the caller: paddle_invoke adopts a dense buffer that one result owns
 * alone (no copy) and copies any other result out before freeing it.
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

/* A dense row-major tensor. `data` is owned by whoever allocated it;
 * paddle_tensor_alloc'd tensors are released with paddle_tensor_free. */
typedef struct paddle_tensor {
  paddle_dtype_t dtype;
  int32_t rank;
  int64_t shape[PADDLE_MAX_RANK];
  void *data;
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

typedef struct paddle_function_signature {
  const char *name;
  int32_t num_inputs;
  const paddle_tensor_spec_t *inputs;
  int32_t num_outputs;
  const paddle_tensor_spec_t *outputs;
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

/*===--- Compiled modules -------------------------------------------------===*/

/* A function exported by a module compiled ahead of time. */
typedef struct paddle_exported_function {
  const paddle_function_signature_t *signature;
  paddle_packed_fn_t entry;
} paddle_exported_function_t;

/* The main program of `paddle-compile --emit exe` executables:
 *   model [--function F] --input a.npy ... [--output-dir D] [--bench N]
 * Returns the process exit code (0, or 1 with a message on stderr). */
int paddle_cli_main(int argc, char **argv,
                    const paddle_exported_function_t *functions, int32_t count);

/*===--- .npy files -------------------------------------------------------===*/

/* Reads a NumPy .npy file (format 1.0-3.0, C order, little-endian). */
paddle_status_t paddle_npy_read(const char *path, paddle_tensor_t *out);
/* Parses .npy bytes from memory (what paddle_npy_read does after reading). */
paddle_status_t paddle_npy_parse(const void *bytes, size_t size,
                                 paddle_tensor_t *out);
/* Writes `tensor` as .npy; goes through a temporary file and a rename, so a
 * failed write never leaves a partial file at `path`. */
paddle_status_t paddle_npy_write(const char *path,
                                 const paddle_tensor_t *tensor);

#ifdef __cplusplus
}
#endif

#endif /* PADDLE_RUNTIME_RUNTIME_H */
