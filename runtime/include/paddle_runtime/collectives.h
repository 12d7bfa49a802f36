/*===- collectives.h - communicators for SPMD programs ------------*- C -*-===*
 *
 * The collectives a sharded program calls, behind one communicator type
 * that several backends serve:
 *
 *   - the in-process mesh: N ranks as threads of one process, sharing
 *     memory (paddle_local_group_*). Collectives read the other ranks'
 *     buffers directly: one copy, no staging.
 *   - MPI (paddle_mpi_comm_create, in the paddle_runtime_mpi library, so
 *     that only programs run under mpirun link MPI): one rank per process.
 *   - NCCL plugs in as a third backend of the same interface (CUDA).
 *
 * Compiled code calls only these functions; it never includes an MPI or
 * NCCL header, so one lowering of the `shard` collectives serves every
 * backend.
 *
 * Every call is collective over the communicator's ranks (send/recv over
 * a pair), blocking, and bounded by the communicator's timeout: a rank that
 * does not arrive, or that failed and called paddle_comm_abort, makes the
 * others return an error that names it, never hang. After such an error the
 * communicator is broken: every later call fails at once. Ranks that call
 * the same collective with different counts, types, operations or roots
 * get an error naming the ranks that disagree (in-process; MPI cannot tell
 * and fails or truncates as MPI does).
 *
 * Buffers: `count` is in elements of `dtype`; send and receive buffers of
 * a rank may be the same (in place) where the sizes allow it
 * (all_reduce, broadcast); otherwise they must not overlap.
 *
 *===----------------------------------------------------------------------===*/

#ifndef PADDLE_RUNTIME_COLLECTIVES_H
#define PADDLE_RUNTIME_COLLECTIVES_H

#include "paddle_runtime/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum paddle_reduce_op {
  PADDLE_REDUCE_SUM = 0,
  PADDLE_REDUCE_PROD = 1,
  PADDLE_REDUCE_MAX = 2,
  PADDLE_REDUCE_MIN = 3,
} paddle_reduce_op_t;

/* "sum", "prod", "max", "min"; "?" for anything else. */
const char *paddle_reduce_op_name(paddle_reduce_op_t op);

typedef struct paddle_comm_s *paddle_comm_t;

/*===--- In-process mesh --------------------------------------------------===*/

typedef struct paddle_local_group_s *paddle_local_group_t;

/* A group of `size` ranks (1..1024) in this process. `timeout_s` bounds
 * every wait of every collective (> 0). */
paddle_status_t paddle_local_group_create(int size, double timeout_s,
                                          paddle_local_group_t *out);
/* Rank `rank`'s communicator; each rank's thread uses its own. The
 * communicators stay valid until the group is released. */
paddle_status_t paddle_local_group_comm(paddle_local_group_t group, int rank,
                                        paddle_comm_t *out);
/* Releases the group and its communicators; no rank may be inside a call. */
void paddle_local_group_release(paddle_local_group_t group);

/*===--- MPI (paddle_runtime_mpi) -----------------------------------------===*/

/* A communicator over MPI_COMM_WORLD, initializing MPI when nobody has (and
 * then finalizing it at exit). PADDLE_UNSUPPORTED when the runtime was built
 * without MPI. */
paddle_status_t paddle_mpi_comm_create(double timeout_s, paddle_comm_t *out);
/* paddle_mpi_comm_create, from paddle_runtime_mpi where the program links
 * it, else from the backend built as a module (PADDLE_RUNTIME_MPI_LIBRARY,
 * else the build's), loaded on this first call: MPI never loads in a run
 * that does not use it. PADDLE_UNSUPPORTED, saying why, when neither is
 * there. */
paddle_status_t paddle_mpi_world(double timeout_s, paddle_comm_t *out);
/* Whether mpirun started this process (MPICH's Hydra or Open MPI). */
int paddle_mpi_launched(void);
/* Releases a communicator from paddle_mpi_comm_create, paddle_mpi_world or
 * paddle_comm_split; nothing for a local group's own (the group owns
 * those). */
void paddle_comm_release(paddle_comm_t comm);

/*===--- Collectives ------------------------------------------------------===*/

int paddle_comm_rank(paddle_comm_t comm);
int paddle_comm_size(paddle_comm_t comm);
/* "local" or "mpi". */
const char *paddle_comm_backend(paddle_comm_t comm);

/* recv[i] = op over ranks of send[i], on every rank; count elements. */
paddle_status_t paddle_comm_all_reduce(paddle_comm_t comm, const void *send,
                                       void *recv, size_t count,
                                       paddle_dtype_t dtype,
                                       paddle_reduce_op_t op);
/* recv (size * count) = the ranks' sends (count each) in rank order. */
paddle_status_t paddle_comm_all_gather(paddle_comm_t comm, const void *send,
                                       void *recv, size_t count,
                                       paddle_dtype_t dtype);
/* recv (count) = block `rank` of the op over ranks of send (size * count). */
paddle_status_t paddle_comm_reduce_scatter(paddle_comm_t comm, const void *send,
                                           void *recv, size_t count,
                                           paddle_dtype_t dtype,
                                           paddle_reduce_op_t op);
/* Block j (count) of rank i's send goes to block i of rank j's recv. */
paddle_status_t paddle_comm_all_to_all(paddle_comm_t comm, const void *send,
                                       void *recv, size_t count,
                                       paddle_dtype_t dtype);
/* Every rank's buf (count) = root's. */
paddle_status_t paddle_comm_broadcast(paddle_comm_t comm, void *buf,
                                      size_t count, paddle_dtype_t dtype,
                                      int root);
/* Point to point, matched by (source, tag) in order. send returns once the
 * data is copied out of buf (it does not wait for the receiver). */
paddle_status_t paddle_comm_send(paddle_comm_t comm, const void *buf,
                                 size_t count, paddle_dtype_t dtype, int dest,
                                 int tag);
paddle_status_t paddle_comm_recv(paddle_comm_t comm, void *buf, size_t count,
                                 paddle_dtype_t dtype, int source, int tag);
paddle_status_t paddle_comm_barrier(paddle_comm_t comm);

/* Collective over comm, as MPI_Comm_split: the ranks that pass the same
 * color (>= 0) form a new communicator, ranked by key and then by their
 * rank in comm; *out is null for a negative color. A mesh axis is such a
 * split (the ranks that share every other coordinate). The new
 * communicator has comm's timeout and backend; release it with
 * paddle_comm_release. */
paddle_status_t paddle_comm_split(paddle_comm_t comm, int color, int key,
                                  paddle_comm_t *out);

/* This rank failed (`reason`): every other rank's pending or next call
 * returns an error naming this rank and the reason. */
void paddle_comm_abort(paddle_comm_t comm, const char *reason);

#ifdef __cplusplus
}
#endif

#endif /* PADDLE_RUNTIME_COLLECTIVES_H */
