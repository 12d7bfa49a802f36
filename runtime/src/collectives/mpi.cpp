//===- mpi.cpp - the MPI backend of the collectives -----------------------===//
//
// One rank per process over a duplicate of MPI_COMM_WORLD. Every call is a
// nonblocking MPI operation polled to completion against the deadline, so
// that a rank that never arrives yields an error instead of a hang. A
// second duplicate carries abort notices: paddle_comm_abort sends the
// failing rank's reason to every other rank, and a rank waiting in any call
// polls for it and returns it. (A rank killed outright is reaped by mpirun,
// which ends the job.)
//
// f16 and bf16 have no MPI type: they travel as 16-bit integers and reduce
// through MPI operations of ours that call reduceInto.
//
//===----------------------------------------------------------------------===//

#include "collectives/communicator.h"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

using paddle::collectives::Kind;
using paddle::collectives::Request;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kAbortTag = 1;

/// Our MPI operation for a 16-bit float type and a reduction.
template <paddle_dtype_t D, paddle_reduce_op_t Op>
void halfReduce(void *in, void *inout, int *len, MPI_Datatype *) {
  paddle::collectives::reduceInto(inout, in, static_cast<size_t>(*len), D, Op);
}

struct HalfOps {
  MPI_Op ops[2][4]; // [bf16, f16][op]

  HalfOps() {
    MPI_Op_create(&halfReduce<PADDLE_BF16, PADDLE_REDUCE_SUM>, 1, &ops[0][0]);
    MPI_Op_create(&halfReduce<PADDLE_BF16, PADDLE_REDUCE_PROD>, 1, &ops[0][1]);
    MPI_Op_create(&halfReduce<PADDLE_BF16, PADDLE_REDUCE_MAX>, 1, &ops[0][2]);
    MPI_Op_create(&halfReduce<PADDLE_BF16, PADDLE_REDUCE_MIN>, 1, &ops[0][3]);
    MPI_Op_create(&halfReduce<PADDLE_F16, PADDLE_REDUCE_SUM>, 1, &ops[1][0]);
    MPI_Op_create(&halfReduce<PADDLE_F16, PADDLE_REDUCE_PROD>, 1, &ops[1][1]);
    MPI_Op_create(&halfReduce<PADDLE_F16, PADDLE_REDUCE_MAX>, 1, &ops[1][2]);
    MPI_Op_create(&halfReduce<PADDLE_F16, PADDLE_REDUCE_MIN>, 1, &ops[1][3]);
  }
};

MPI_Datatype mpiType(paddle_dtype_t dtype) {
  switch (dtype) {
  case PADDLE_F32:
    return MPI_FLOAT;
  case PADDLE_F64:
    return MPI_DOUBLE;
  case PADDLE_I8:
    return MPI_INT8_T;
  case PADDLE_I32:
    return MPI_INT32_T;
  case PADDLE_I64:
    return MPI_INT64_T;
  case PADDLE_I1:
    return MPI_UINT8_T;
  case PADDLE_F16:
  case PADDLE_BF16:
    return MPI_UINT16_T;
  default:
    return MPI_BYTE;
  }
}

MPI_Op mpiOp(paddle_dtype_t dtype, paddle_reduce_op_t op) {
  if (dtype == PADDLE_F16 || dtype == PADDLE_BF16) {
    static HalfOps half; // after MPI_Init, on first use
    return half.ops[dtype == PADDLE_F16][op];
  }
  if (dtype == PADDLE_I1) // 0/1 bytes: or, and
    return op == PADDLE_REDUCE_SUM || op == PADDLE_REDUCE_MAX ? MPI_MAX
                                                              : MPI_MIN;
  switch (op) {
  case PADDLE_REDUCE_SUM:
    return MPI_SUM;
  case PADDLE_REDUCE_PROD:
    return MPI_PROD;
  case PADDLE_REDUCE_MAX:
    return MPI_MAX;
  case PADDLE_REDUCE_MIN:
    return MPI_MIN;
  }
  return MPI_SUM;
}

void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

class MpiComm final : public paddle_comm_s {
public:
  MpiComm(MPI_Comm comm, MPI_Comm control, double timeoutS)
      : comm(comm), control(control),
        timeout(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(timeoutS))) {
    MPI_Comm_rank(comm, &myRank);
    MPI_Comm_size(comm, &mySize);
  }
  ~MpiComm() override {
    MPI_Comm_free(&comm);
    MPI_Comm_free(&control);
  }
  int rank() const override { return myRank; }
  int size() const override { return mySize; }
  const char *backend() const override { return "mpi"; }
  bool ownedByCaller() const override { return true; }

  paddle_status_t collective(const Request &req, const void *send,
                             void *recv) override;
  paddle_status_t send(const void *buf, size_t bytes, int dest,
                       int tag) override;
  paddle_status_t recv(void *buf, size_t bytes, int source, int tag) override;
  paddle_status_t split(int color, int key, paddle_comm_t *out) override;
  void abort(const char *reason) override;

private:
  /// Takes an abort notice another rank sent, if one is there: its
  /// reason, and the sender's rank (-1 without a notice).
  int takeNotice(std::string &reason);
  /// Polls `request` to completion, an abort notice or the deadline.
  paddle_status_t wait(MPI_Request *request, const std::string &what);
  paddle_status_t fail(paddle_status_code_t code, const std::string &reason) {
    broken = true;
    brokenCode = code;
    brokenReason = reason;
    return brokenStatus();
  }
  paddle_status_t brokenStatus() const {
    return paddle_status_create(brokenCode, "rank %d of %d: %s", myRank, mySize,
                                brokenReason.c_str());
  }
  /// `amount` is elements for a collective, bytes for send/recv.
  paddle_status_t tooLarge(const char *what, size_t amount, const char *unit) {
    return paddle_status_create(PADDLE_UNSUPPORTED,
                                "%s of %zu %s: MPI counts are int", what,
                                amount, unit);
  }

  MPI_Comm comm, control;
  Clock::duration timeout;
  int myRank = 0, mySize = 1;
  bool broken = false;
  paddle_status_code_t brokenCode = PADDLE_OK;
  std::string brokenReason;
  std::string abortNotice; // kept alive for the sends of abort()
};

int MpiComm::takeNotice(std::string &reason) {
  int notice = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, kAbortTag, control, &notice, &status);
  if (!notice)
    return -1;
  int bytes = 0;
  MPI_Get_count(&status, MPI_CHAR, &bytes);
  reason.assign(static_cast<size_t>(bytes), '\0');
  MPI_Recv(reason.data(), bytes, MPI_CHAR, status.MPI_SOURCE, kAbortTag,
           control, MPI_STATUS_IGNORE);
  return status.MPI_SOURCE;
}

paddle_status_t MpiComm::wait(MPI_Request *request, const std::string &what) {
  Clock::time_point start = Clock::now(), deadline = start + timeout;
  for (;;) {
    int done = 0;
    if (MPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return fail(PADDLE_INTERNAL, what + ": MPI reported an error");
    if (done)
      return nullptr;
    std::string reason;
    if (takeNotice(reason) >= 0)
      return fail(PADDLE_ABORTED, reason);
    Clock::time_point now = Clock::now();
    if (now > deadline) {
      char seconds[32];
      snprintf(seconds, sizeof(seconds), "%g s",
               std::chrono::duration<double>(timeout).count());
      return fail(PADDLE_DEADLINE_EXCEEDED,
                  what + " timed out after " + seconds +
                      ": another rank did not arrive or died");
    }
    // MPI progresses a nonblocking call only inside MPI_Test: keep testing,
    // yielding the core to the other ranks (more ranks than cores is
    // common here); sleep only once the call has waited a second.
    if (now - start < std::chrono::seconds(1))
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

paddle_status_t MpiComm::collective(const Request &req, const void *send,
                                    void *recv) {
  if (broken)
    return brokenStatus();
  std::string what = req.str();
  if (req.count > static_cast<size_t>(INT32_MAX) / mySize)
    return tooLarge(paddle::collectives::kindName(req.kind), req.count,
                    "elements");
  int count = static_cast<int>(req.count);
  MPI_Datatype type = mpiType(req.dtype);
  MPI_Request request;
  const void *in = send == recv ? MPI_IN_PLACE : send;
  switch (req.kind) {
  case Kind::AllReduce:
    MPI_Iallreduce(in, recv, count, type, mpiOp(req.dtype, req.op), comm,
                   &request);
    break;
  case Kind::AllGather:
    MPI_Iallgather(send, count, type, recv, count, type, comm, &request);
    break;
  case Kind::ReduceScatter:
    MPI_Ireduce_scatter_block(send, recv, count, type, mpiOp(req.dtype, req.op),
                              comm, &request);
    break;
  case Kind::AllToAll:
    MPI_Ialltoall(send, count, type, recv, count, type, comm, &request);
    break;
  case Kind::Broadcast:
    MPI_Ibcast(recv, count, type, req.root, comm, &request);
    break;
  case Kind::Barrier:
    MPI_Ibarrier(comm, &request);
    break;
  }
  return wait(&request, what);
}

paddle_status_t MpiComm::send(const void *buf, size_t bytes, int dest,
                              int tag) {
  if (broken)
    return brokenStatus();
  if (bytes > static_cast<size_t>(INT32_MAX))
    return tooLarge("send", bytes, "bytes");
  // MPI_Isend then wait: like MPI_Send, it returns once buf may be reused.
  MPI_Request request;
  MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dest, tag, comm, &request);
  return wait(&request, "send to rank " + std::to_string(dest) + " (tag " +
                            std::to_string(tag) + ")");
}

paddle_status_t MpiComm::recv(void *buf, size_t bytes, int source, int tag) {
  if (broken)
    return brokenStatus();
  if (bytes > static_cast<size_t>(INT32_MAX))
    return tooLarge("recv", bytes, "bytes");
  std::string what = "recv from rank " + std::to_string(source) + " (tag " +
                     std::to_string(tag) + ")";
  // Probe first, so that a message of another size is an error, not MPI's
  // truncation.
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    int ready = 0;
    MPI_Status status;
    MPI_Iprobe(source, tag, comm, &ready, &status);
    if (ready) {
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      if (static_cast<size_t>(got) != bytes)
        return fail(PADDLE_INVALID_ARGUMENT,
                    what + ": expected " + std::to_string(bytes) +
                        " bytes, the message has " + std::to_string(got));
      break;
    }
    int notice = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, kAbortTag, control, &notice, MPI_STATUS_IGNORE);
    if (notice || Clock::now() > deadline)
      break; // wait() below reports either
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  MPI_Request request;
  MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, source, tag, comm,
            &request);
  paddle_status_t s = wait(&request, what);
  if (s)
    MPI_Cancel(&request);
  return s;
}

paddle_status_t MpiComm::split(int color, int key, paddle_comm_t *out) {
  if (broken)
    return brokenStatus();
  // MPI_Comm_split blocks without a deadline: agree on being here first.
  Request barrier;
  if (paddle_status_t s = collective(barrier, nullptr, nullptr))
    return s;
  int c = color < 0 ? MPI_UNDEFINED : color;
  MPI_Comm sub, subControl;
  if (MPI_Comm_split(comm, c, key, &sub) != MPI_SUCCESS ||
      MPI_Comm_split(control, c, key, &subControl) != MPI_SUCCESS)
    return fail(PADDLE_INTERNAL, "MPI_Comm_split failed");
  if (color < 0)
    return nullptr;
  MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(subControl, MPI_ERRORS_RETURN);
  auto *c2 = new (std::nothrow)
      MpiComm(sub, subControl, std::chrono::duration<double>(timeout).count());
  if (!c2)
    return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                "out of memory splitting a communicator");
  *out = c2;
  return nullptr;
}

void MpiComm::abort(const char *reason) {
  if (broken && brokenCode == PADDLE_ABORTED)
    return;
  abortNotice = "rank " + std::to_string(myRank) +
                " failed: " + (reason ? reason : "(no reason given)");
  std::vector<MPI_Request> sends(mySize, MPI_REQUEST_NULL);
  for (int r = 0; r < mySize; ++r)
    if (r != myRank)
      // Synchronous: complete once the peer has taken the notice, so that
      // this process may exit right after without the notice being lost.
      MPI_Issend(abortNotice.data(), static_cast<int>(abortNotice.size()),
                 MPI_CHAR, r, kAbortTag, control, &sends[r]);
  // Peers waiting in a call take it at once. A peer that fails too is
  // sending its own notice and waits for this rank to take it: take those
  // (so neither waits for the other), and stop waiting for that peer,
  // which is past its calls. A peer that died takes nothing: wait no
  // longer than the timeout.
  Clock::time_point until = Clock::now() + timeout;
  int done = 0;
  while (!done && Clock::now() < until) {
    std::string theirs;
    if (int source = takeNotice(theirs); source >= 0) {
      MPI_Request &send = sends[source];
      if (send != MPI_REQUEST_NULL) {
        MPI_Cancel(&send);
        MPI_Request_free(&send);
      }
      continue;
    }
    MPI_Testall(mySize, sends.data(), &done, MPI_STATUSES_IGNORE);
    if (!done)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  broken = true;
  brokenCode = PADDLE_ABORTED;
  brokenReason = abortNotice;
}

} // namespace

extern "C" paddle_status_t paddle_mpi_comm_create(double timeout_s,
                                                  paddle_comm_t *out) {
  if (!out)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_mpi_comm_create: out is null");
  *out = nullptr;
  if (!(timeout_s > 0))
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "an MPI communicator needs a timeout above 0 s; %g was given",
        timeout_s);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return paddle_status_create(PADDLE_UNSUPPORTED,
                                "MPI was finalized in this process");
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) !=
        MPI_SUCCESS)
      return paddle_status_create(PADDLE_INTERNAL, "MPI_Init_thread failed");
    std::atexit(finalizeAtExit);
  }
  // Errors come back as codes (checked above), not MPI's default abort.
  MPI_Comm comm, control;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &control);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(control, MPI_ERRORS_RETURN);
  auto *c = new (std::nothrow) MpiComm(comm, control, timeout_s);
  if (!c)
    return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                "out of memory creating an MPI communicator");
  *out = c;
  return nullptr;
}
