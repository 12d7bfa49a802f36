//===- spmd.cpp - the mesh a compiled SPMD function runs on ---------------===//
//
// paddle_runtime/spmd.h: a thread's binding to its device of a mesh, and the
// collectives that compiled code calls over mesh axes.
//
// A collective over mesh axes runs on the communicator of the devices that
// differ only along those axes: the world itself where the axes span it in
// world order, no communicator at all for a group of one device, and
// otherwise one split from the world on first use and cached in the
// binding. Splitting is collective over the world; every device of an SPMD
// program reaches the same collectives in the same order, so every device
// splits for the same axes at the same point.
//
// The communicators move whole buffers of `count` elements per rank, in
// rank (group) order. A collective along a tensor dim that is not the
// leading one moves blocks that are strided in the tensor: those are
// rearranged with one helper (transposeRuns) into or out of a temporary
// buffer in which each block is contiguous.
//
// Failures end the call with paddle_runtime_fail, which leaves compiled
// code with longjmp: no frame of this file may hold an object with a
// destructor when it is called. The functions that do the work return a
// status instead, with every object they made destroyed, and failOnError
// reports it.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/spmd.h"

#include "collectives/communicator.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

using paddle::collectives::Kind;

namespace {

//===--- Memref descriptors -----------------------------------------------===//

/// MLIR's unranked memref: a rank and a pointer to a ranked descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// A ranked view read from a descriptor. `data` is aligned + offset.
struct View {
  char *data = nullptr;
  int64_t rank = 0;
  const int64_t *sizes = nullptr;
  const int64_t *strides = nullptr;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d = 0; d < rank; ++d)
      n *= sizes[d];
    return n;
  }
  std::vector<int64_t> shape() const {
    return std::vector<int64_t>(sizes, sizes + rank);
  }
};

paddle_status_t invalid(const std::string &message) {
  return paddle_status_create(PADDLE_INVALID_ARGUMENT, "%s", message.c_str());
}

std::string listText(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

/// "2x2", "4".
/// "mesh of shape [2, 2]".
std::string meshText(const std::vector<int64_t> &shape) {
  std::string s = "mesh of shape [";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

paddle_status_t readView(const void *arg, size_t elementSize, const char *name,
                         View *view) {
  auto *m = static_cast<const UnrankedMemRef *>(arg);
  if (!m || !m->descriptor)
    return invalid(std::string("the `") + name + "` memref is null");
  if (m->rank < 0 || m->rank > PADDLE_MAX_RANK)
    return invalid(std::string("the `") + name + "` memref has rank " +
                   std::to_string(m->rank));
  auto *words = static_cast<const int64_t *>(m->descriptor);
  view->data = reinterpret_cast<char *>(static_cast<uintptr_t>(words[1])) +
               words[2] * static_cast<int64_t>(elementSize);
  view->rank = m->rank;
  view->sizes = words + 3;
  view->strides = words + 3 + m->rank;
  return nullptr;
}

/// A tensor argument: dense and row-major (a dim of size 1 may have any
/// stride, as MLIR's canonical layouts give it).
paddle_status_t readTensor(const void *arg, size_t elementSize,
                           const char *name, View *view) {
  if (paddle_status_t s = readView(arg, elementSize, name, view))
    return s;
  int64_t expect = 1;
  bool empty = false;
  for (int64_t d = 0; d < view->rank; ++d) {
    if (view->sizes[d] < 0)
      return invalid(std::string("`") + name + "` has shape " +
                     listText(view->shape()));
    empty |= view->sizes[d] == 0;
  }
  for (int64_t d = view->rank - 1; d >= 0 && !empty; --d) {
    if (view->sizes[d] != 1 && view->strides[d] != expect)
      return invalid(std::string("`") + name +
                     "` is not a dense row-major buffer (sizes " +
                     listText(view->shape()) + ", strides " +
                     listText(std::vector<int64_t>(
                         view->strides, view->strides + view->rank)) +
                     ")");
    expect *= view->sizes[d];
  }
  if (!view->data && !empty)
    return invalid(std::string("`") + name + "` has no data");
  return nullptr;
}

/// The values of a rank-1 i64 memref (`mesh`, `axes`).
paddle_status_t readList(const void *arg, const char *name,
                         std::vector<int64_t> *values) {
  View view;
  if (paddle_status_t s = readView(arg, sizeof(int64_t), name, &view))
    return s;
  if (view.rank != 1)
    return invalid(std::string("the `") + name + "` memref has rank " +
                   std::to_string(view.rank) + ", expected 1");
  if (view.sizes[0] < 0 || view.sizes[0] > PADDLE_MAX_RANK)
    return invalid(std::string("the `") + name + "` memref has " +
                   std::to_string(view.sizes[0]) + " elements");
  values->clear();
  for (int64_t i = 0; i < view.sizes[0]; ++i) {
    int64_t value;
    memcpy(&value,
           view.data +
               i * view.strides[0] * static_cast<int64_t>(sizeof(int64_t)),
           sizeof(value));
    values->push_back(value);
  }
  return nullptr;
}

//===--- The binding ------------------------------------------------------===//

struct Binding {
  paddle_comm_t world = nullptr; // null: unbound
  int rank = 0;                  // in the world
  std::vector<int64_t> shape;    // the mesh
  std::vector<int64_t> coords;   // this device's multi-index
  /// Communicators split from the world, by the axes list they serve.
  std::vector<std::pair<std::vector<int64_t>, paddle_comm_t>> groups;

  Binding() = default;
  Binding(const Binding &) = delete;
  Binding &operator=(const Binding &) = delete;
  ~Binding() { reset(); }

  void reset() {
    for (auto &group : groups)
      paddle_comm_release(group.second);
    groups.clear();
    world = nullptr;
    rank = 0;
    shape.clear();
    coords.clear();
  }

  /// "device 3 (mesh coordinates [1, 1])".
  std::string deviceText() const {
    return "device " + std::to_string(rank) + " (mesh coordinates " +
           listText(coords) + ")";
  }
};

thread_local Binding binding;

/// The devices of a collective over `axes` (checked against the binding).
struct Group {
  paddle_comm_t comm = nullptr; // null for a group of one device
  int64_t size = 1;
};

int64_t groupSize(const Binding &b, const std::vector<int64_t> &axes) {
  int64_t size = 1;
  for (int64_t axis : axes)
    size *= b.shape[axis];
  return size;
}

/// The communicator of this device's group over `axes`, split from the
/// world on first use (collectively: see the file comment).
paddle_status_t groupOf(Binding &b, const std::vector<int64_t> &axes,
                        Group *group) {
  group->size = groupSize(b, axes);
  group->comm = nullptr;
  if (group->size == 1)
    return nullptr;
  // The whole world in world order: every axis of size > 1 listed, in
  // increasing order (the axes not listed then have size 1).
  if (group->size == paddle_comm_size(b.world)) {
    int64_t last = -1;
    bool inOrder = true;
    for (int64_t axis : axes) {
      if (b.shape[axis] == 1)
        continue;
      inOrder &= axis > last;
      last = axis;
    }
    if (inOrder) {
      group->comm = b.world;
      return nullptr;
    }
  }
  for (auto &cached : b.groups) {
    if (cached.first == axes) {
      group->comm = cached.second;
      return nullptr;
    }
  }
  // color: the coordinates along the other axes, row-major; key: those
  // along `axes`, the first listed the major one.
  int64_t color = 0, key = 0;
  std::vector<bool> listed(b.shape.size(), false);
  for (int64_t axis : axes) {
    listed[axis] = true;
    key = key * b.shape[axis] + b.coords[axis];
  }
  for (size_t d = 0; d < b.shape.size(); ++d)
    if (!listed[d])
      color = color * b.shape[d] + b.coords[d];
  paddle_comm_t comm = nullptr;
  if (paddle_status_t s = paddle_comm_split(b.world, static_cast<int>(color),
                                            static_cast<int>(key), &comm))
    return s;
  b.groups.emplace_back(axes, comm);
  group->comm = comm;
  return nullptr;
}

/// The checks every entry point starts with: a binding, the mesh the
/// module was partitioned for, valid axes.
paddle_status_t checkCall(const Binding &b, const void *mesh,
                          const std::vector<int64_t> &axes) {
  if (!b.world)
    return invalid("this thread is not bound to a mesh device (run the "
                   "function with --mesh N or under mpirun)");
  std::vector<int64_t> partitioned;
  if (paddle_status_t s = readList(mesh, "mesh", &partitioned))
    return s;
  if (partitioned != b.shape)
    return invalid("the module was partitioned for a " + meshText(partitioned) +
                   ", the run has a " + meshText(b.shape));
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(b.shape.size()))
      return invalid("mesh axis " + std::to_string(axes[i]) +
                     " is outside the " + std::to_string(b.shape.size()) +
                     "-axis mesh");
    for (size_t j = 0; j < i; ++j)
      if (axes[j] == axes[i])
        return invalid("mesh axis " + std::to_string(axes[i]) +
                       " is listed twice");
  }
  return nullptr;
}

//===--- Moving blocks ----------------------------------------------------===//

/// src is a rows x cols grid of `run`-byte runs, row-major; dst gets its
/// transpose, cols x rows. With a tensor viewed as [outer][n][run] (the
/// dims before `dim`, `dim` cut into n blocks, the rest of a block's
/// slice), this turns the tensor into its n blocks laid out one after the
/// other ([n][outer][run]: rows = outer, cols = n) and back (rows = n,
/// cols = outer).
void transposeRuns(const char *src, char *dst, size_t rows, size_t cols,
                   size_t run) {
  if (run == 0)
    return;
  for (size_t c = 0; c < cols; ++c)
    for (size_t r = 0; r < rows; ++r)
      memcpy(dst + (c * rows + r) * run, src + (r * cols + c) * run, run);
}

/// The product of shape[0..dim).
size_t outerOf(const std::vector<int64_t> &shape, int64_t dim) {
  size_t n = 1;
  for (int64_t d = 0; d < dim; ++d)
    n *= static_cast<size_t>(shape[d]);
  return n;
}

/// The bytes of a row-major tensor of shape[dim..rank): with shape a block
/// shape and dim the dim cut into blocks, a run of transposeRuns.
size_t runOf(const std::vector<int64_t> &shape, int64_t dim,
             size_t elementSize) {
  size_t n = elementSize;
  for (size_t d = static_cast<size_t>(dim); d < shape.size(); ++d)
    n *= static_cast<size_t>(shape[d]);
  return n;
}

struct Buffer {
  std::unique_ptr<char[]> bytes;
  paddle_status_t allocate(size_t size) {
    bytes.reset(new (std::nothrow) char[size ? size : 1]);
    if (!bytes)
      return paddle_status_create(
          PADDLE_OUT_OF_MEMORY,
          "out of memory for a %zu-byte buffer to rearrange blocks", size);
    return nullptr;
  }
};

/// One collective over the group, `count` elements per device (per block
/// for the blocked ones). A group of one device copies.
paddle_status_t runCollective(const Group &group, Kind kind, const void *send,
                              void *recv, size_t count, paddle_dtype_t dtype,
                              paddle_reduce_op_t op) {
  if (!group.comm) {
    if (send != recv && count)
      memcpy(recv, send, count * paddle_dtype_size(dtype));
    return nullptr;
  }
  switch (kind) {
  case Kind::AllReduce:
    return paddle_comm_all_reduce(group.comm, send, recv, count, dtype, op);
  case Kind::AllGather:
    return paddle_comm_all_gather(group.comm, send, recv, count, dtype);
  case Kind::ReduceScatter:
    return paddle_comm_reduce_scatter(group.comm, send, recv, count, dtype, op);
  case Kind::AllToAll:
    return paddle_comm_all_to_all(group.comm, send, recv, count, dtype);
  default:
    return paddle_status_create(PADDLE_INTERNAL, "unexpected collective");
  }
}

//===--- The collectives --------------------------------------------------===//

/// What one entry point was asked: read and checked by prepare().
struct Call {
  Kind kind = Kind::AllReduce;
  std::vector<int64_t> axes;
  paddle_dtype_t dtype = PADDLE_DTYPE_INVALID;
  size_t elementSize = 0;
  paddle_reduce_op_t op = PADDLE_REDUCE_SUM;
  View in, out;
  int64_t groupSize = 1;
  /// What the call was asked, as given, for its description (describe()),
  /// which only a failure builds: a collective that succeeds formats no
  /// text.
  bool axesRead = false;
  bool processIndex = false;
  int32_t rawOp = 0;
  int64_t dim = 0, dim2 = 0;
};

/// "sum", ...; "?" for an int that is no reduction.
const char *opName(int32_t op) {
  if (op < PADDLE_REDUCE_SUM || op > PADDLE_REDUCE_MIN)
    return "?";
  return paddle_reduce_op_name(static_cast<paddle_reduce_op_t>(op));
}

/// "all_gather over mesh axes [1] (dim 0)".
std::string describe(const Call &call) {
  if (call.processIndex)
    return "process_index of mesh axis " + std::to_string(call.dim);
  std::string detail;
  switch (call.kind) {
  case Kind::AllReduce:
    detail = opName(call.rawOp);
    break;
  case Kind::AllGather:
    detail = "dim " + std::to_string(call.dim);
    break;
  case Kind::ReduceScatter:
    detail =
        std::string(opName(call.rawOp)) + ", dim " + std::to_string(call.dim);
    break;
  default:
    detail = "split dim " + std::to_string(call.dim) + ", concat dim " +
             std::to_string(call.dim2);
    break;
  }
  return std::string(paddle::collectives::kindName(call.kind)) +
         " over mesh axes " + (call.axesRead ? listText(call.axes) : "?") +
         " (" + detail + ")";
}

/// Reads and checks what every collective shares; `reduces` for the ones
/// with an op.
paddle_status_t prepare(Call &call, void *in, void *out, void *mesh, void *axes,
                        int32_t dtype, bool reduces, int32_t op) {
  call.processIndex = false;
  call.rawOp = op;
  paddle_status_t badAxes = readList(axes, "axes", &call.axes);
  call.axesRead = !badAxes;
  if (badAxes)
    return badAxes;
  if (paddle_status_t s = checkCall(binding, mesh, call.axes))
    return s;
  // Range checks on the integers first: an enum holding a value outside
  // its enumerators' range is undefined.
  if (dtype <= PADDLE_DTYPE_INVALID || dtype > PADDLE_I64 ||
      paddle_dtype_size(static_cast<paddle_dtype_t>(dtype)) == 0)
    return invalid("invalid dtype " + std::to_string(dtype));
  call.dtype = static_cast<paddle_dtype_t>(dtype);
  call.elementSize = paddle_dtype_size(call.dtype);
  if (reduces) {
    if (op < PADDLE_REDUCE_SUM || op > PADDLE_REDUCE_MIN)
      return invalid("invalid reduction " + std::to_string(op));
    call.op = static_cast<paddle_reduce_op_t>(op);
    if (!paddle::collectives::isReducible(call.dtype))
      return paddle_status_create(PADDLE_UNSUPPORTED, "cannot reduce %s",
                                  paddle_dtype_name(call.dtype));
  }
  if (paddle_status_t s = readTensor(in, call.elementSize, "in", &call.in))
    return s;
  if (paddle_status_t s = readTensor(out, call.elementSize, "out", &call.out))
    return s;
  call.groupSize = groupSize(binding, call.axes);
  return nullptr;
}

paddle_status_t checkDim(const Call &call, int64_t dim, const char *name) {
  if (dim < 0 || dim >= call.in.rank)
    return invalid(std::string(name) + " " + std::to_string(dim) +
                   " is outside the rank-" + std::to_string(call.in.rank) +
                   " `in`");
  return nullptr;
}

paddle_status_t checkSplits(const Call &call, int64_t dim) {
  if (call.in.sizes[dim] % call.groupSize != 0)
    return invalid("dim " + std::to_string(dim) + " of `in` " +
                   listText(call.in.shape()) + " does not split into " +
                   std::to_string(call.groupSize) + " blocks");
  return nullptr;
}

paddle_status_t checkOutShape(const Call &call,
                              const std::vector<int64_t> &expected) {
  if (call.out.shape() != expected)
    return invalid("`out` has shape " + listText(call.out.shape()) +
                   ", expected " + listText(expected) + " (`in` " +
                   listText(call.in.shape()) + ", " +
                   std::to_string(call.groupSize) + " devices)");
  return nullptr;
}

paddle_status_t allReduce(Call &call) {
  if (paddle_status_t s = checkOutShape(call, call.in.shape()))
    return s;
  Group group;
  if (paddle_status_t s = groupOf(binding, call.axes, &group))
    return s;
  return runCollective(group, Kind::AllReduce, call.in.data, call.out.data,
                       call.in.numElements(), call.dtype, call.op);
}

paddle_status_t allGather(Call &call, int64_t dim) {
  if (paddle_status_t s = checkDim(call, dim, "dim"))
    return s;
  std::vector<int64_t> shape = call.in.shape(), gathered = shape;
  gathered[dim] *= call.groupSize;
  if (paddle_status_t s = checkOutShape(call, gathered))
    return s;
  Group group;
  if (paddle_status_t s = groupOf(binding, call.axes, &group))
    return s;
  size_t count = call.in.numElements(), outer = outerOf(shape, dim);
  if (outer == 1 || group.size == 1)
    return runCollective(group, Kind::AllGather, call.in.data, call.out.data,
                         count, call.dtype, call.op);
  // The devices' `in`s one after the other, then each cut along `dim`.
  Buffer blocks;
  if (paddle_status_t s =
          blocks.allocate(count * group.size * call.elementSize))
    return s;
  if (paddle_status_t s =
          runCollective(group, Kind::AllGather, call.in.data,
                        blocks.bytes.get(), count, call.dtype, call.op))
    return s;
  transposeRuns(blocks.bytes.get(), call.out.data, group.size, outer,
                runOf(shape, dim, call.elementSize));
  return nullptr;
}

paddle_status_t reduceScatter(Call &call, int64_t dim) {
  if (paddle_status_t s = checkDim(call, dim, "dim"))
    return s;
  if (paddle_status_t s = checkSplits(call, dim))
    return s;
  std::vector<int64_t> shape = call.in.shape(), block = shape;
  block[dim] /= call.groupSize;
  if (paddle_status_t s = checkOutShape(call, block))
    return s;
  Group group;
  if (paddle_status_t s = groupOf(binding, call.axes, &group))
    return s;
  size_t count = call.out.numElements(), outer = outerOf(shape, dim);
  if (outer == 1 || group.size == 1)
    return runCollective(group, Kind::ReduceScatter, call.in.data,
                         call.out.data, count, call.dtype, call.op);
  Buffer blocks;
  if (paddle_status_t s =
          blocks.allocate(count * group.size * call.elementSize))
    return s;
  transposeRuns(call.in.data, blocks.bytes.get(), outer, group.size,
                runOf(block, dim, call.elementSize));
  return runCollective(group, Kind::ReduceScatter, blocks.bytes.get(),
                       call.out.data, count, call.dtype, call.op);
}

paddle_status_t allToAll(Call &call, int64_t splitDim, int64_t concatDim) {
  if (paddle_status_t s = checkDim(call, splitDim, "split dim"))
    return s;
  if (paddle_status_t s = checkDim(call, concatDim, "concat dim"))
    return s;
  if (paddle_status_t s = checkSplits(call, splitDim))
    return s;
  std::vector<int64_t> shape = call.in.shape(), block = shape;
  block[splitDim] /= call.groupSize;
  std::vector<int64_t> result = block;
  result[concatDim] *= call.groupSize;
  if (paddle_status_t s = checkOutShape(call, result))
    return s;
  Group group;
  if (paddle_status_t s = groupOf(binding, call.axes, &group))
    return s;
  size_t count = call.in.numElements() / group.size;
  if (group.size == 1)
    return runCollective(group, Kind::AllToAll, call.in.data, call.out.data,
                         count, call.dtype, call.op);
  // Send: block i (slice i along splitDim) contiguous; receive: block i
  // from device i, then concatenated along concatDim.
  size_t splitOuter = outerOf(shape, splitDim);
  size_t concatOuter = outerOf(block, concatDim);
  size_t bytes = count * group.size * call.elementSize;
  Buffer sendBlocks, recvBlocks;
  const char *send = call.in.data;
  char *recv = call.out.data;
  if (splitOuter > 1) {
    if (paddle_status_t s = sendBlocks.allocate(bytes))
      return s;
    transposeRuns(call.in.data, sendBlocks.bytes.get(), splitOuter, group.size,
                  runOf(block, splitDim, call.elementSize));
    send = sendBlocks.bytes.get();
  }
  if (concatOuter > 1) {
    if (paddle_status_t s = recvBlocks.allocate(bytes))
      return s;
    recv = recvBlocks.bytes.get();
  }
  if (paddle_status_t s = runCollective(group, Kind::AllToAll, send, recv,
                                        count, call.dtype, call.op))
    return s;
  if (concatOuter > 1)
    transposeRuns(recv, call.out.data, group.size, concatOuter,
                  runOf(block, concatDim, call.elementSize));
  return nullptr;
}

//===--- Failing ----------------------------------------------------------===//

// paddle_runtime_fail leaves with longjmp: what it is given lives here, not
// in a frame it skips.
thread_local std::string failureMessage;
thread_local std::string abortReason;

/// Ends the call when `s` is an error: aborts the world and the groups this
/// device split from it, so that the other devices fail instead of waiting
/// for this one, then fails with "`call` described: cause" and the error's
/// code.
void failOnError(paddle_status_t s, const Call &call) {
  if (!s)
    return;
  paddle_status_code_t code = paddle_status_code(s);
  failureMessage = describe(call) + ": " + paddle_status_message(s);
  paddle_status_free(s);
  if (binding.world) {
    abortReason = binding.deviceText() + ": " + failureMessage;
    paddle_comm_abort(binding.world, abortReason.c_str());
    for (auto &group : binding.groups)
      paddle_comm_abort(group.second, abortReason.c_str());
  }
  paddle_runtime_fail(code, failureMessage.c_str());
}

thread_local Call currentCall;

} // namespace

//===--- The C API --------------------------------------------------------===//

extern "C" paddle_status_t paddle_spmd_bind(paddle_comm_t world,
                                            int32_t mesh_rank,
                                            const int64_t *mesh_shape) {
  if (!world)
    return invalid("paddle_spmd_bind: the world communicator is null");
  if (mesh_rank < 1 || mesh_rank > PADDLE_MAX_MESH_RANK)
    return invalid("paddle_spmd_bind: a mesh has 1 to " +
                   std::to_string(PADDLE_MAX_MESH_RANK) + " axes; " +
                   std::to_string(mesh_rank) + " were given");
  if (!mesh_shape)
    return invalid("paddle_spmd_bind: the mesh shape is null");
  std::vector<int64_t> shape(mesh_shape, mesh_shape + mesh_rank);
  int64_t size = paddle_comm_size(world), devices = 1;
  for (int32_t d = 0; d < mesh_rank; ++d) {
    if (shape[d] < 1)
      return invalid("paddle_spmd_bind: mesh axis " + std::to_string(d) +
                     " has size " + std::to_string(shape[d]) +
                     "; a mesh axis has at least 1 device");
    // Past the world's size the product need not be exact (nor overflow):
    // devices and shape[d] are then at most size, an int.
    if (devices <= size)
      devices = shape[d] > size ? size + 1 : devices * shape[d];
  }
  if (devices != size)
    return invalid("paddle_spmd_bind: a " + meshText(shape) +
                   " does not match the world communicator's " +
                   std::to_string(size) + " ranks");
  binding.reset();
  binding.world = world;
  binding.rank = paddle_comm_rank(world);
  binding.shape = std::move(shape);
  binding.coords.assign(mesh_rank, 0);
  int64_t rest = binding.rank;
  for (int32_t d = mesh_rank - 1; d >= 0; --d) {
    binding.coords[d] = rest % binding.shape[d];
    rest /= binding.shape[d];
  }
  return nullptr;
}

extern "C" void paddle_spmd_unbind(void) { binding.reset(); }

extern "C" paddle_comm_t paddle_spmd_world(void) { return binding.world; }

// Each entry point keeps its Call in a thread-local (currentCall), so that
// failOnError's longjmp skips no destructor of a frame here.

extern "C" void _mlir_ciface_paddle_spmd_all_reduce(void *in, void *out,
                                                    void *mesh, void *axes,
                                                    int32_t dtype, int32_t op) {
  Call &call = currentCall;
  call.kind = Kind::AllReduce;
  paddle_status_t s =
      prepare(call, in, out, mesh, axes, dtype, /*reduces=*/true, op);
  failOnError(s ? s : allReduce(call), call);
}

extern "C" void _mlir_ciface_paddle_spmd_all_gather(void *in, void *out,
                                                    void *mesh, void *axes,
                                                    int32_t dtype,
                                                    int64_t dim) {
  Call &call = currentCall;
  call.kind = Kind::AllGather;
  call.dim = dim;
  paddle_status_t s =
      prepare(call, in, out, mesh, axes, dtype, /*reduces=*/false, 0);
  failOnError(s ? s : allGather(call, dim), call);
}

extern "C" void _mlir_ciface_paddle_spmd_reduce_scatter(void *in, void *out,
                                                        void *mesh, void *axes,
                                                        int32_t dtype,
                                                        int32_t op,
                                                        int64_t dim) {
  Call &call = currentCall;
  call.kind = Kind::ReduceScatter;
  call.dim = dim;
  paddle_status_t s =
      prepare(call, in, out, mesh, axes, dtype, /*reduces=*/true, op);
  failOnError(s ? s : reduceScatter(call, dim), call);
}

extern "C" void _mlir_ciface_paddle_spmd_all_to_all(void *in, void *out,
                                                    void *mesh, void *axes,
                                                    int32_t dtype,
                                                    int64_t split_dim,
                                                    int64_t concat_dim) {
  Call &call = currentCall;
  call.kind = Kind::AllToAll;
  call.dim = split_dim;
  call.dim2 = concat_dim;
  paddle_status_t s =
      prepare(call, in, out, mesh, axes, dtype, /*reduces=*/false, 0);
  failOnError(s ? s : allToAll(call, split_dim, concat_dim), call);
}

extern "C" int64_t _mlir_ciface_paddle_spmd_process_index(void *mesh,
                                                          int64_t axis) {
  Call &call = currentCall;
  call.processIndex = true;
  call.dim = axis;
  call.axes.assign(1, axis);
  paddle_status_t s = checkCall(binding, mesh, call.axes);
  failOnError(s, call);
  return binding.coords[axis];
}
