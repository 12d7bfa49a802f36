//===- communicator.h - the interface every collectives backend serves ----===//
//
// paddle_comm_s is the abstract communicator behind the C API of
// paddle_runtime/collectives.h; each backend (local.cpp: threads of one
// process; mpi.cpp: MPI processes; NCCL next) derives from it. The C
// functions check their arguments once (api.cpp) and dispatch here.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_COLLECTIVES_COMMUNICATOR_H
#define PADDLE_RUNTIME_COLLECTIVES_COMMUNICATOR_H

#include "paddle_runtime/collectives.h"

#include <cstddef>
#include <string>

namespace paddle::collectives {

enum class Kind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  Barrier,
};

const char *kindName(Kind kind);

/// What one rank asked of a collective; every rank must ask the same.
struct Request {
  Kind kind = Kind::Barrier;
  size_t count = 0;
  paddle_dtype_t dtype = PADDLE_F32;
  paddle_reduce_op_t op = PADDLE_REDUCE_SUM;
  int root = 0;

  bool operator==(const Request &other) const;
  /// "all_reduce of 1024 x f32 (sum)".
  std::string str() const;
};

/// acc[i] = op(acc[i], src[i]) for n elements of dtype. i1 reduces as a
/// logical or (sum, max) or and (prod, min); f16 and bf16 in f32, rounded
/// to nearest even once per step.
void reduceInto(void *acc, const void *src, size_t n, paddle_dtype_t dtype,
                paddle_reduce_op_t op);

/// Whether reduceInto (and so every reducing collective) takes dtype.
bool isReducible(paddle_dtype_t dtype);

} // namespace paddle::collectives

struct paddle_comm_s {
  virtual ~paddle_comm_s() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char *backend() const = 0;

  /// A collective of `request` with this rank's buffers (send may be null
  /// for a broadcast, whose buffer is recv). Arguments are checked.
  virtual paddle_status_t
  collective(const paddle::collectives::Request &request, const void *send,
             void *recv) = 0;
  virtual paddle_status_t send(const void *buf, size_t bytes, int dest,
                               int tag) = 0;
  virtual paddle_status_t recv(void *buf, size_t bytes, int source,
                               int tag) = 0;
  /// The color >= 0 part of a split (paddle_comm_split checked comm).
  virtual paddle_status_t split(int color, int key, paddle_comm_t *out) = 0;
  virtual void abort(const char *reason) = 0;
  /// Whether paddle_comm_release deletes this communicator (a local
  /// group's belong to the group).
  virtual bool ownedByCaller() const = 0;
};

#endif // PADDLE_RUNTIME_COLLECTIVES_COMMUNICATOR_H
