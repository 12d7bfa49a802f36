/*===- spmd.h - the mesh a compiled SPMD function runs on ---------*- C -*-===*
 *
 * A function partitioned for a device mesh (paddle-lower-collectives) runs
 * once per device, each run on its own thread (in-process mesh) or process
 * (MPI). Before it runs, the host binds the calling thread to its place in
 * the mesh: a communicator over all devices (the world) and the mesh shape.
 * The compiled code's collectives then name mesh axes, and the runtime
 * finds (and caches) the communicator of the devices that differ only
 * along those axes.
 *
 * Mesh indexing: devices are numbered row-major over the mesh shape; world
 * rank r is the device whose multi-index is the row-major unflattening of
 * r. A collective over mesh axes (a0, a1, ...) groups the devices that
 * agree on every other axis; inside a group, a device's position is the
 * row-major linear index of its coordinates along (a0, a1, ...), a0 the
 * major one. That position is the order of all_gather's blocks and of
 * reduce_scatter's and all_to_all's.
 *
 *===----------------------------------------------------------------------===*/

#ifndef PADDLE_RUNTIME_SPMD_H
#define PADDLE_RUNTIME_SPMD_H

#include "paddle_runtime/collectives.h"
#include "paddle_runtime/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Binds the calling thread to its device of a mesh: `world` (not owned;
 * it must outlive the binding) has one rank per device, its size the
 * product of `mesh_shape` (mesh_rank axes, 1..PADDLE_MAX_MESH_RANK, each
 * >= 1); the device is world rank paddle_comm_rank(world). Replaces an
 * earlier binding of this thread; a bind that fails (PADDLE_INVALID_ARGUMENT)
 * leaves the earlier binding as it was. */
paddle_status_t paddle_spmd_bind(paddle_comm_t world, int32_t mesh_rank,
                                 const int64_t *mesh_shape);

/* Ends the calling thread's binding and releases the communicators it
 * split from the world (not the world). Nothing when it is not bound; a
 * thread that exits bound releases them too. */
void paddle_spmd_unbind(void);

/* The calling thread's world communicator, or NULL when it is not bound.
 * A host that fails outside compiled code aborts it (paddle_comm_abort) so
 * that the other devices do not wait for this one: a device in a
 * collective over the whole world, or whose next collective splits or uses
 * the world, then fails naming this one. A device already waiting for this
 * one in a collective over fewer axes (a communicator split from the
 * world) is not woken by a world abort: it fails at the communicator's
 * timeout, naming this device's rank in that group as missing. */
paddle_comm_t paddle_spmd_world(void);

/* Runs function `function_index` of `session`, partitioned for a device
 * mesh (its signature has `spmd`), on every device of the mesh, for the
 * full (unsplit) `inputs`: each device takes its block of them, and
 * `outputs` (num_outputs of them, freed by the caller) receive the full
 * results put together from the devices' blocks. With a null `world` the
 * devices are threads of this process (an in-process mesh whose
 * collectives time out after `timeout_s`; device 0 is the calling thread,
 * bound for the call, which ends an earlier binding of it); otherwise this
 * process is the device `paddle_comm_rank(world)` of a world with one rank per
 * device (MPI), and every rank receives the full results. A device that fails
 * makes the others fail; the error names it. */
paddle_status_t
paddle_session_run_spmd(paddle_session_t session, int32_t function_index,
                        const paddle_tensor_t *inputs, int32_t num_inputs,
                        paddle_tensor_t *outputs, int32_t num_outputs,
                        paddle_comm_t world, double timeout_s);

/*===--- What compiled code calls -----------------------------------------===*
 *
 * Arguments are MLIR unranked memref descriptors (llvm.emit_c_interface):
 * `in` and `out` dense row-major tensors of `dtype` (a paddle_dtype_t) and
 * of the same rank, not overlapping (all_reduce may run in place); `mesh`
 * (rank-1 i64) the mesh shape the module was partitioned for, which must
 * equal the bound one; `axes` (rank-1 i64) the distinct mesh axes of the
 * collective, major first. A group of one device (no axes, or axes of
 * size 1) copies `in` to `out`. `dim`s are tensor dims of `in`; a dim that
 * is cut into group-size blocks must divide evenly.
 *
 * Any failure (no binding, a mesh that differs, arguments that do not fit,
 * a collective error) aborts the world communicator and the ones this
 * device split from it, so that the other devices fail too instead of
 * waiting (their errors carry "device R (mesh coordinates [...]): " and
 * this device's message), and ends the call with paddle_runtime_fail:
 * inside paddle_invoke the call returns the collective's status code
 * (PADDLE_ABORTED, PADDLE_DEADLINE_EXCEEDED, ...) or
 * PADDLE_INVALID_ARGUMENT, with a message that names the collective, its
 * axes and dims, as "all_gather over mesh axes [1] (dim 0): <cause>". */

/* out = op over the group of `in` (same shape). */
void _mlir_ciface_paddle_spmd_all_reduce(void *in, void *out, void *mesh,
                                         void *axes, int32_t dtype, int32_t op);
/* out = the group's `in`s concatenated along `dim` in group order. */
void _mlir_ciface_paddle_spmd_all_gather(void *in, void *out, void *mesh,
                                         void *axes, int32_t dtype,
                                         int64_t dim);
/* out = this device's block along `dim` (group order) of op over the
 * group of `in`. */
void _mlir_ciface_paddle_spmd_reduce_scatter(void *in, void *out, void *mesh,
                                             void *axes, int32_t dtype,
                                             int32_t op, int64_t dim);
/* `in` is cut into group-size blocks along `split_dim`; block i goes to the
 * group's device i, and `out` is the blocks received, concatenated along
 * `concat_dim` in group order. */
void _mlir_ciface_paddle_spmd_all_to_all(void *in, void *out, void *mesh,
                                         void *axes, int32_t dtype,
                                         int64_t split_dim, int64_t concat_dim);
/* This device's coordinate along mesh axis `axis`. Fails as the
 * collectives do (no binding, a mesh that differs, an axis outside it). */
int64_t _mlir_ciface_paddle_spmd_process_index(void *mesh, int64_t axis);

#ifdef __cplusplus
}
#endif

#endif /* PADDLE_RUNTIME_SPMD_H */
