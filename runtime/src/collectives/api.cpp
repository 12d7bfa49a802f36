//===- api.cpp - the collectives C API: argument checks, then the backend -===//

#include "collectives/communicator.h"

#include <cstdint>
#include <cstring>

using paddle::collectives::Kind;
using paddle::collectives::Request;

extern "C" const char *paddle_reduce_op_name(paddle_reduce_op_t op) {
  switch (op) {
  case PADDLE_REDUCE_SUM:
    return "sum";
  case PADDLE_REDUCE_PROD:
    return "prod";
  case PADDLE_REDUCE_MAX:
    return "max";
  case PADDLE_REDUCE_MIN:
    return "min";
  }
  return "?";
}

namespace {

paddle_status_t invalid(const char *what, const char *format, int a = 0,
                        int b = 0) {
  char buffer[256];
  snprintf(buffer, sizeof(buffer), format, a, b);
  return paddle_status_create(PADDLE_INVALID_ARGUMENT, "%s: %s", what, buffer);
}

/// The checks every collective shares; `elements` is the larger buffer's
/// element count (count times the group size where one side is blocked).
paddle_status_t check(paddle_comm_t comm, const Request &req, const void *send,
                      const void *recv, bool needsSend) {
  const char *what = paddle::collectives::kindName(req.kind);
  if (!comm)
    return invalid(what, "the communicator is null");
  if (req.kind == Kind::Barrier)
    return nullptr;
  if (paddle_dtype_size(req.dtype) == 0)
    return invalid(what, "invalid dtype %d", static_cast<int>(req.dtype));
  bool reduces = req.kind == Kind::AllReduce || req.kind == Kind::ReduceScatter;
  if (reduces && !paddle::collectives::isReducible(req.dtype))
    return paddle_status_create(PADDLE_UNSUPPORTED, "%s: cannot reduce %s",
                                what, paddle_dtype_name(req.dtype));
  if (reduces && (req.op < PADDLE_REDUCE_SUM || req.op > PADDLE_REDUCE_MIN))
    return invalid(what, "invalid reduction %d", static_cast<int>(req.op));
  if (req.kind == Kind::Broadcast && (req.root < 0 || req.root >= comm->size()))
    return invalid(what, "root %d is outside the %d ranks", req.root,
                   comm->size());
  if (req.count > SIZE_MAX / paddle_dtype_size(req.dtype) /
                      static_cast<size_t>(comm->size()))
    return invalid(what, "the element count overflows");
  if (req.count && ((needsSend && !send) || !recv))
    return invalid(what, "a buffer is null");
  return nullptr;
}

paddle_status_t run(paddle_comm_t comm, const Request &req, const void *send,
                    void *recv, bool needsSend = true) {
  if (paddle_status_t s = check(comm, req, send, recv, needsSend))
    return s;
  return comm->collective(req, send, recv);
}

paddle_status_t checkPeer(paddle_comm_t comm, const char *what, size_t count,
                          paddle_dtype_t dtype, int peer, const void *buf) {
  if (!comm)
    return invalid(what, "the communicator is null");
  if (paddle_dtype_size(dtype) == 0)
    return invalid(what, "invalid dtype %d", static_cast<int>(dtype));
  if (peer < 0 || peer >= comm->size())
    return invalid(what, "rank %d is outside the %d ranks", peer, comm->size());
  if (peer == comm->rank())
    return invalid(what, "rank %d cannot message itself", peer);
  if (count > SIZE_MAX / paddle_dtype_size(dtype))
    return invalid(what, "the element count overflows");
  if (count && !buf)
    return invalid(what, "the buffer is null");
  return nullptr;
}

} // namespace

extern "C" int paddle_comm_rank(paddle_comm_t comm) {
  return comm ? comm->rank() : -1;
}
extern "C" int paddle_comm_size(paddle_comm_t comm) {
  return comm ? comm->size() : 0;
}
extern "C" const char *paddle_comm_backend(paddle_comm_t comm) {
  return comm ? comm->backend() : "none";
}

extern "C" paddle_status_t paddle_comm_all_reduce(paddle_comm_t comm,
                                                  const void *send, void *recv,
                                                  size_t count,
                                                  paddle_dtype_t dtype,
                                                  paddle_reduce_op_t op) {
  return run(comm, {Kind::AllReduce, count, dtype, op, 0}, send, recv);
}

extern "C" paddle_status_t paddle_comm_all_gather(paddle_comm_t comm,
                                                  const void *send, void *recv,
                                                  size_t count,
                                                  paddle_dtype_t dtype) {
  return run(comm, {Kind::AllGather, count, dtype, PADDLE_REDUCE_SUM, 0}, send,
             recv);
}

extern "C" paddle_status_t paddle_comm_reduce_scatter(paddle_comm_t comm,
                                                      const void *send,
                                                      void *recv, size_t count,
                                                      paddle_dtype_t dtype,
                                                      paddle_reduce_op_t op) {
  return run(comm, {Kind::ReduceScatter, count, dtype, op, 0}, send, recv);
}

extern "C" paddle_status_t paddle_comm_all_to_all(paddle_comm_t comm,
                                                  const void *send, void *recv,
                                                  size_t count,
                                                  paddle_dtype_t dtype) {
  return run(comm, {Kind::AllToAll, count, dtype, PADDLE_REDUCE_SUM, 0}, send,
             recv);
}

extern "C" paddle_status_t paddle_comm_broadcast(paddle_comm_t comm, void *buf,
                                                 size_t count,
                                                 paddle_dtype_t dtype,
                                                 int root) {
  return run(comm, {Kind::Broadcast, count, dtype, PADDLE_REDUCE_SUM, root},
             nullptr, buf, /*needsSend=*/false);
}

extern "C" paddle_status_t paddle_comm_barrier(paddle_comm_t comm) {
  return run(comm, {}, nullptr, nullptr, false);
}

extern "C" paddle_status_t paddle_comm_send(paddle_comm_t comm, const void *buf,
                                            size_t count, paddle_dtype_t dtype,
                                            int dest, int tag) {
  if (paddle_status_t s = checkPeer(comm, "send", count, dtype, dest, buf))
    return s;
  return comm->send(buf, count * paddle_dtype_size(dtype), dest, tag);
}

extern "C" paddle_status_t paddle_comm_recv(paddle_comm_t comm, void *buf,
                                            size_t count, paddle_dtype_t dtype,
                                            int source, int tag) {
  if (paddle_status_t s = checkPeer(comm, "recv", count, dtype, source, buf))
    return s;
  return comm->recv(buf, count * paddle_dtype_size(dtype), source, tag);
}

extern "C" paddle_status_t paddle_comm_split(paddle_comm_t comm, int color,
                                             int key, paddle_comm_t *out) {
  if (!comm || !out)
    return invalid("split", "null argument");
  *out = nullptr;
  return comm->split(color, key, out);
}

extern "C" void paddle_comm_abort(paddle_comm_t comm, const char *reason) {
  if (comm)
    comm->abort(reason);
}

extern "C" void paddle_comm_release(paddle_comm_t comm) {
  if (comm && comm->ownedByCaller())
    delete comm;
}
