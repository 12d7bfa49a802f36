//===- SpmdTest.cpp - the collectives compiled SPMD code calls ------------===//
//
// The entry points of paddle_runtime/spmd.h, called as compiled code calls
// them (unranked memref descriptors built here) on in-process meshes of
// several shapes, one thread per device, each bound to its device and
// running its calls inside paddle_invoke. Every collective over every list
// of mesh axes is checked against a reference computed here element by
// element; then the faults: no binding, a mesh that differs, a device that
// fails or aborts, bad arguments.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/spmd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct StatusText {
  paddle_status_code_t code = PADDLE_OK;
  std::string message;
};

StatusText take(paddle_status_t s) {
  StatusText t{paddle_status_code(s), paddle_status_message(s)};
  paddle_status_free(s);
  return t;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<int64_t> unravel(int64_t k, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = k % shape[d];
    k /= shape[d];
  }
  return index;
}

int64_t ravel(const std::vector<int64_t> &index,
              const std::vector<int64_t> &shape) {
  int64_t k = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    k = k * shape[d] + index[d];
  return k;
}

//===--- Descriptors ------------------------------------------------------===//

/// A ranked memref descriptor over `data` (row-major strides unless given)
/// and the unranked memref that compiled code passes for it.
class MemRef {
public:
  MemRef() = default;
  MemRef(void *data, const std::vector<int64_t> &shape,
         std::vector<int64_t> strides = {}) {
    size_t rank = shape.size();
    if (strides.empty()) {
      strides.assign(rank, 1);
      for (size_t d = rank; d-- > 1;)
        strides[d - 1] = strides[d] * shape[d];
    }
    words.assign(3 + 2 * rank, 0);
    words[0] = words[1] =
        static_cast<int64_t>(reinterpret_cast<uintptr_t>(data));
    for (size_t d = 0; d < rank; ++d) {
      words[3 + d] = shape[d];
      words[3 + rank + d] = strides[d];
    }
    unranked.rank = static_cast<int64_t>(rank);
  }
  void *arg() {
    unranked.descriptor = words.data();
    return &unranked;
  }

private:
  std::vector<int64_t> words;
  struct {
    int64_t rank;
    void *descriptor;
  } unranked = {0, nullptr};
};

/// A rank-1 i64 memref (a mesh shape, a list of axes) that owns its values.
class I64List {
public:
  explicit I64List(std::vector<int64_t> values = {})
      : values(std::move(values)) {}
  I64List(const I64List &other) : values(other.values) {}
  I64List &operator=(const I64List &other) {
    values = other.values;
    return *this;
  }
  void *arg() {
    ref = MemRef(values.data(), {static_cast<int64_t>(values.size())});
    return ref.arg();
  }

private:
  std::vector<int64_t> values;
  MemRef ref;
};

//===--- Running on a mesh ------------------------------------------------===//

thread_local const std::function<void()> *packedBody = nullptr;

void callPacked(void **) { (*packedBody)(); }

/// Runs `body` as a compiled function with no arguments: an entry point
/// that fails ends it, and the status says why.
paddle_status_t invokeAsCompiled(const std::function<void()> &body) {
  paddle_function_signature_t sig = {};
  sig.name = "spmd_fn";
  packedBody = &body;
  return paddle_invoke(callPacked, &sig, nullptr, 0, nullptr);
}

/// Runs body(device) on one thread per device of an in-process mesh of
/// `shape`, each thread bound to its device and the body run as a compiled
/// function; returns each device's status.
std::vector<StatusText> onMesh(const std::vector<int64_t> &shape,
                               double timeoutS,
                               const std::function<void(int)> &body) {
  int n = static_cast<int>(product(shape));
  paddle_local_group_t group = nullptr;
  EXPECT_EQ(take(paddle_local_group_create(n, timeoutS, &group)).code,
            PADDLE_OK);
  std::vector<StatusText> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      paddle_comm_t comm = nullptr;
      paddle_status_t s = paddle_local_group_comm(group, r, &comm);
      if (!s)
        s = paddle_spmd_bind(comm, static_cast<int32_t>(shape.size()),
                             shape.data());
      if (!s) {
        EXPECT_EQ(paddle_spmd_world(), comm);
        std::function<void()> run = [&] { body(r); };
        s = invokeAsCompiled(run);
        paddle_spmd_unbind();
        EXPECT_EQ(paddle_spmd_world(), nullptr);
      }
      results[r] = take(s);
    });
  }
  for (std::thread &t : threads)
    t.join();
  paddle_local_group_release(group);
  return results;
}

void expectAllOk(const std::vector<StatusText> &results) {
  for (size_t r = 0; r < results.size(); ++r)
    EXPECT_EQ(results[r].code, PADDLE_OK)
        << "device " << r << ": " << results[r].message;
}

/// The devices of `device`'s group over `axes`, in group order: those that
/// share its coordinates along the other axes, by their coordinates along
/// `axes` (row-major, the first listed the major one).
std::vector<int> groupOf(const std::vector<int64_t> &mesh,
                         const std::vector<int64_t> &axes, int device) {
  std::vector<int64_t> mine = unravel(device, mesh);
  std::vector<std::pair<int64_t, int>> members;
  for (int r = 0; r < product(mesh); ++r) {
    std::vector<int64_t> theirs = unravel(r, mesh);
    bool same = true;
    for (size_t d = 0; d < mesh.size(); ++d)
      if (std::find(axes.begin(), axes.end(), int64_t(d)) == axes.end())
        same &= theirs[d] == mine[d];
    if (!same)
      continue;
    int64_t key = 0;
    for (int64_t a : axes)
      key = key * mesh[a] + theirs[a];
    members.push_back({key, r});
  }
  std::sort(members.begin(), members.end());
  std::vector<int> group;
  for (auto &m : members)
    group.push_back(m.second);
  return group;
}

//===--- The reference ----------------------------------------------------===//

struct Tensor {
  paddle_dtype_t dtype = PADDLE_F32;
  std::vector<int64_t> shape;
  std::vector<char> bytes;

  Tensor() = default;
  Tensor(paddle_dtype_t dtype, std::vector<int64_t> shape)
      : dtype(dtype), shape(std::move(shape)),
        bytes(product(this->shape) * paddle_dtype_size(dtype), 0) {}
  size_t elem() const { return paddle_dtype_size(dtype); }
  int64_t numel() const { return product(shape); }
  char *at(int64_t k) { return bytes.data() + k * elem(); }
  const char *at(int64_t k) const { return bytes.data() + k * elem(); }

  double load(int64_t k) const {
    switch (dtype) {
    case PADDLE_F32: {
      float v;
      memcpy(&v, at(k), 4);
      return v;
    }
    case PADDLE_I64: {
      int64_t v;
      memcpy(&v, at(k), 8);
      return double(v);
    }
    case PADDLE_F16: {
      _Float16 v;
      memcpy(&v, at(k), 2);
      return double(float(v));
    }
    case PADDLE_BF16: {
      uint16_t half;
      memcpy(&half, at(k), 2);
      uint32_t bits = uint32_t(half) << 16;
      float v;
      memcpy(&v, &bits, 4);
      return v;
    }
    default:
      ADD_FAILURE() << "unexpected dtype";
      return 0;
    }
  }
  /// `v` is exact in every dtype the tests use (small integers).
  void store(int64_t k, double v) {
    switch (dtype) {
    case PADDLE_F32: {
      float f = float(v);
      memcpy(at(k), &f, 4);
      break;
    }
    case PADDLE_I64: {
      int64_t i = int64_t(v);
      memcpy(at(k), &i, 8);
      break;
    }
    case PADDLE_F16: {
      _Float16 h = _Float16(float(v));
      memcpy(at(k), &h, 2);
      break;
    }
    case PADDLE_BF16: {
      float f = float(v);
      uint32_t bits;
      memcpy(&bits, &f, 4);
      uint16_t half = uint16_t(bits >> 16);
      memcpy(at(k), &half, 2);
      break;
    }
    default:
      ADD_FAILURE() << "unexpected dtype";
    }
  }
};

/// Device `device`'s input: small integers, distinct across devices and
/// elements where the dtype has room (f16 and bf16 stay below 64, so that
/// a sum over 4 devices is exact).
Tensor inputOf(paddle_dtype_t dtype, const std::vector<int64_t> &shape,
               int device) {
  Tensor t(dtype, shape);
  bool small = dtype == PADDLE_F16 || dtype == PADDLE_BF16;
  for (int64_t k = 0; k < t.numel(); ++k)
    t.store(k, small ? double((device * 37 + k * 5) % 64 - 32)
                     : double(device * 1000 + k - 500));
  return t;
}

Tensor reduce(const std::vector<Tensor> &inputs, paddle_reduce_op_t op) {
  Tensor out = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) {
    for (int64_t k = 0; k < out.numel(); ++k) {
      double a = out.load(k), b = inputs[i].load(k);
      switch (op) {
      case PADDLE_REDUCE_SUM:
        a += b;
        break;
      case PADDLE_REDUCE_PROD:
        a *= b;
        break;
      case PADDLE_REDUCE_MAX:
        a = std::max(a, b);
        break;
      case PADDLE_REDUCE_MIN:
        a = std::min(a, b);
        break;
      }
      out.store(k, a);
    }
  }
  return out;
}

/// Block j of n along dim.
Tensor slice(const Tensor &t, int64_t dim, int64_t n, int64_t j) {
  std::vector<int64_t> shape = t.shape;
  shape[dim] /= n;
  Tensor out(t.dtype, shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    std::vector<int64_t> index = unravel(k, shape);
    index[dim] += j * shape[dim];
    memcpy(out.at(k), t.at(ravel(index, t.shape)), t.elem());
  }
  return out;
}

Tensor concat(const std::vector<Tensor> &blocks, int64_t dim) {
  std::vector<int64_t> shape = blocks[0].shape;
  int64_t b = shape[dim];
  shape[dim] *= int64_t(blocks.size());
  Tensor out(blocks[0].dtype, shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    std::vector<int64_t> index = unravel(k, shape);
    const Tensor &from = blocks[index[dim] / b];
    index[dim] %= b;
    memcpy(out.at(k), from.at(ravel(index, from.shape)), out.elem());
  }
  return out;
}

//===--- Cases ------------------------------------------------------------===//

enum class Op { AllReduce, AllGather, ReduceScatter, AllToAll };

struct Case {
  Op op;
  std::vector<int64_t> axes;
  paddle_dtype_t dtype;
  std::vector<int64_t> inShape;
  paddle_reduce_op_t reduction = PADDLE_REDUCE_SUM;
  int64_t dim = 0;    // all_gather, reduce_scatter; all_to_all's split
  int64_t concat = 0; // all_to_all

  std::vector<Tensor> in, out, want; // per device

  std::string name() const {
    static const char *ops[] = {"all_reduce", "all_gather", "reduce_scatter",
                                "all_to_all"};
    std::string s = std::string(ops[int(op)]) + " over [";
    for (size_t i = 0; i < axes.size(); ++i)
      s += (i ? "," : "") + std::to_string(axes[i]);
    s += "] of " + std::string(paddle_dtype_name(dtype)) + " [";
    for (size_t i = 0; i < inShape.size(); ++i)
      s += (i ? "," : "") + std::to_string(inShape[i]);
    return s + "] " + paddle_reduce_op_name(reduction) + " dims " +
           std::to_string(dim) + "," + std::to_string(concat);
  }

  /// Inputs, the reference results and output buffers (filled with a
  /// pattern that no result has) for every device.
  void build(const std::vector<int64_t> &mesh) {
    int n = int(product(mesh));
    for (int r = 0; r < n; ++r)
      in.push_back(inputOf(dtype, inShape, r));
    for (int r = 0; r < n; ++r) {
      std::vector<int> group = groupOf(mesh, axes, r);
      int64_t size = int64_t(group.size());
      int64_t pos = std::find(group.begin(), group.end(), r) - group.begin();
      std::vector<Tensor> ins;
      for (int g : group)
        ins.push_back(in[g]);
      switch (op) {
      case Op::AllReduce:
        want.push_back(reduce(ins, reduction));
        break;
      case Op::AllGather:
        want.push_back(::concat(ins, dim));
        break;
      case Op::ReduceScatter:
        want.push_back(slice(reduce(ins, reduction), dim, size, pos));
        break;
      case Op::AllToAll: {
        std::vector<Tensor> received;
        for (const Tensor &t : ins)
          received.push_back(slice(t, dim, size, pos));
        want.push_back(::concat(received, concat));
        break;
      }
      }
      Tensor o(dtype, want.back().shape);
      std::fill(o.bytes.begin(), o.bytes.end(), char(0x7b));
      out.push_back(std::move(o));
    }
  }
};

/// The arguments of one device's call, built before the call.
struct CallArgs {
  MemRef in, out;
  I64List axes, mesh;
};

void call(const Case &c, CallArgs &a) {
  switch (c.op) {
  case Op::AllReduce:
    _mlir_ciface_paddle_spmd_all_reduce(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                        a.axes.arg(), c.dtype, c.reduction);
    break;
  case Op::AllGather:
    _mlir_ciface_paddle_spmd_all_gather(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                        a.axes.arg(), c.dtype, c.dim);
    break;
  case Op::ReduceScatter:
    _mlir_ciface_paddle_spmd_reduce_scatter(a.in.arg(), a.out.arg(),
                                            a.mesh.arg(), a.axes.arg(), c.dtype,
                                            c.reduction, c.dim);
    break;
  case Op::AllToAll:
    _mlir_ciface_paddle_spmd_all_to_all(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                        a.axes.arg(), c.dtype, c.dim, c.concat);
    break;
  }
}

/// Every list of distinct mesh axes, in every order, the empty one too.
std::vector<std::vector<int64_t>> axesLists(int64_t meshRank) {
  std::vector<std::vector<int64_t>> lists = {{}};
  for (size_t i = 0; i < lists.size(); ++i)
    for (int64_t a = 0; a < meshRank; ++a)
      if (std::find(lists[i].begin(), lists[i].end(), a) == lists[i].end()) {
        std::vector<int64_t> longer = lists[i];
        longer.push_back(a);
        lists.push_back(longer);
      }
  return lists;
}

std::vector<Case> casesFor(const std::vector<int64_t> &axes) {
  const paddle_reduce_op_t sum = PADDLE_REDUCE_SUM, max = PADDLE_REDUCE_MAX,
                           min = PADDLE_REDUCE_MIN;
  // Sizes along the split dims divide by every group size (1, 2, 4).
  return {
      {Op::AllReduce, axes, PADDLE_F32, {3, 5}, sum},
      {Op::AllReduce, axes, PADDLE_F32, {3, 5}, max},
      {Op::AllGather, axes, PADDLE_F32, {2, 3}, sum, 0},
      {Op::AllGather, axes, PADDLE_F32, {2, 3}, sum, 1},
      {Op::ReduceScatter, axes, PADDLE_F32, {4, 8}, sum, 0},
      {Op::ReduceScatter, axes, PADDLE_F32, {4, 8}, max, 1},
      {Op::AllToAll, axes, PADDLE_F32, {4, 8}, sum, 0, 1},
      {Op::AllToAll, axes, PADDLE_F32, {4, 8}, sum, 1, 0},
      {Op::AllToAll, axes, PADDLE_F32, {4, 8}, sum, 1, 1},
      // A middle dim: blocks strided on both sides.
      {Op::AllGather, axes, PADDLE_F32, {2, 3, 2}, sum, 1},
      {Op::ReduceScatter, axes, PADDLE_F32, {2, 4, 3}, sum, 1},
      {Op::AllToAll, axes, PADDLE_F32, {2, 4, 4}, sum, 2, 1},
      {Op::AllToAll, axes, PADDLE_F32, {3, 4, 2}, sum, 1, 2},
      // No elements.
      {Op::AllGather, axes, PADDLE_F32, {2, 0}, sum, 1},
      {Op::AllToAll, axes, PADDLE_F32, {4, 0}, sum, 0, 1},
      // Other element sizes.
      {Op::AllGather, axes, PADDLE_I64, {2, 3}, sum, 1},
      {Op::ReduceScatter, axes, PADDLE_I64, {2, 4}, sum, 1},
      {Op::AllReduce, axes, PADDLE_I64, {5}, min},
      {Op::AllReduce, axes, PADDLE_F16, {3, 4}, sum},
      {Op::AllToAll, axes, PADDLE_F16, {4, 4}, sum, 1, 0},
      {Op::AllReduce, axes, PADDLE_BF16, {3, 4}, sum},
      {Op::ReduceScatter, axes, PADDLE_BF16, {2, 4}, max, 1},
  };
}

class SpmdMeshTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(SpmdMeshTest, EveryCollectiveOverEveryAxesListMatchesTheReference) {
  std::vector<int64_t> mesh = GetParam();
  int n = int(product(mesh));
  std::vector<Case> cases;
  for (const std::vector<int64_t> &axes : axesLists(int64_t(mesh.size())))
    for (Case &c : casesFor(axes))
      cases.push_back(std::move(c));
  for (Case &c : cases)
    c.build(mesh);
  std::vector<std::vector<CallArgs>> args(n);
  for (int r = 0; r < n; ++r)
    for (Case &c : cases)
      args[r].push_back({MemRef(c.in[r].bytes.data(), c.in[r].shape),
                         MemRef(c.out[r].bytes.data(), c.out[r].shape),
                         I64List(c.axes), I64List(mesh)});
  // Every device makes every call, in the same order, as SPMD code does;
  // the communicators of the axes lists are split on first use.
  expectAllOk(onMesh(mesh, 10.0, [&](int r) {
    for (size_t i = 0; i < cases.size(); ++i)
      call(cases[i], args[r][i]);
  }));
  for (const Case &c : cases)
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(c.out[r].bytes, c.want[r].bytes)
          << c.name() << ", device " << r;
}

TEST_P(SpmdMeshTest, ProcessIndexIsTheDeviceCoordinate) {
  std::vector<int64_t> mesh = GetParam();
  int n = int(product(mesh));
  std::vector<std::vector<int64_t>> got(n,
                                        std::vector<int64_t>(mesh.size(), -1));
  std::vector<I64List> meshes(n, I64List(mesh));
  expectAllOk(onMesh(mesh, 10.0, [&](int r) {
    for (size_t a = 0; a < mesh.size(); ++a)
      got[r][a] =
          _mlir_ciface_paddle_spmd_process_index(meshes[r].arg(), int64_t(a));
  }));
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(got[r], unravel(r, mesh)) << "device " << r;
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, SpmdMeshTest,
    ::testing::Values(std::vector<int64_t>{2, 2}, std::vector<int64_t>{4, 1},
                      std::vector<int64_t>{1, 4}, std::vector<int64_t>{4},
                      std::vector<int64_t>{1}, std::vector<int64_t>{2, 1, 2}),
    [](const ::testing::TestParamInfo<std::vector<int64_t>> &info) {
      std::string s;
      for (size_t i = 0; i < info.param.size(); ++i)
        s += (i ? "x" : "") + std::to_string(info.param[i]);
      return s;
    });

//===--- Binding ----------------------------------------------------------===//

TEST(Spmd, BindChecksTheMeshAgainstTheWorld) {
  paddle_local_group_t group = nullptr;
  ASSERT_EQ(take(paddle_local_group_create(4, 1.0, &group)).code, PADDLE_OK);
  paddle_comm_t world = nullptr;
  ASSERT_EQ(take(paddle_local_group_comm(group, 3, &world)).code, PADDLE_OK);
  auto bindMessage = [&](paddle_comm_t comm, std::vector<int64_t> shape,
                         int32_t rank = -1) {
    StatusText t = take(paddle_spmd_bind(
        comm, rank < 0 ? int32_t(shape.size()) : rank, shape.data()));
    EXPECT_EQ(t.code, PADDLE_INVALID_ARGUMENT) << t.message;
    return t.message;
  };
  EXPECT_EQ(bindMessage(nullptr, {4}),
            "paddle_spmd_bind: the world communicator is null");
  EXPECT_EQ(bindMessage(world, {4}, 0),
            "paddle_spmd_bind: a mesh has 1 to 4 axes; 0 were given");
  EXPECT_EQ(bindMessage(world, {1, 1, 1, 2, 2}),
            "paddle_spmd_bind: a mesh has 1 to 4 axes; 5 were given");
  EXPECT_EQ(bindMessage(world, {2, 0}),
            "paddle_spmd_bind: mesh axis 1 has size 0; a mesh axis has at "
            "least 1 device");
  EXPECT_EQ(bindMessage(world, {2, 3}),
            "paddle_spmd_bind: a mesh of shape [2, 3] does not match the world "
            "communicator's 4 ranks");
  // A product that overflows int64 is no match either.
  int64_t huge = int64_t(1) << 62;
  EXPECT_NE(bindMessage(world, {huge, huge, 4}).find("does not match"),
            std::string::npos);
  EXPECT_EQ(paddle_spmd_world(), nullptr);

  ASSERT_EQ(
      take(paddle_spmd_bind(world, 2, std::vector<int64_t>{2, 2}.data())).code,
      PADDLE_OK);
  EXPECT_EQ(paddle_spmd_world(), world);
  // A failed bind keeps the earlier binding; a good one replaces it.
  bindMessage(world, {3});
  EXPECT_EQ(paddle_spmd_world(), world);
  I64List oneD({4});
  ASSERT_EQ(
      take(paddle_spmd_bind(world, 1, std::vector<int64_t>{4}.data())).code,
      PADDLE_OK);
  EXPECT_EQ(_mlir_ciface_paddle_spmd_process_index(oneD.arg(), 0), 3);
  paddle_spmd_unbind();
  EXPECT_EQ(paddle_spmd_world(), nullptr);
  paddle_spmd_unbind(); // unbinding twice is harmless
  paddle_local_group_release(group);
}

//===--- Faults -----------------------------------------------------------===//

TEST(Spmd, AnUnboundThreadFailsTheCall) {
  paddle_spmd_unbind();
  float x[2] = {1, 2}, y[2] = {};
  CallArgs a{MemRef(x, {2}), MemRef(y, {2}), I64List({0}), I64List({2})};
  StatusText t = take(invokeAsCompiled([&] {
    _mlir_ciface_paddle_spmd_all_reduce(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                        a.axes.arg(), PADDLE_F32,
                                        PADDLE_REDUCE_SUM);
  }));
  EXPECT_EQ(t.code, PADDLE_INVALID_ARGUMENT);
  EXPECT_EQ(t.message,
            "spmd_fn: all_reduce over mesh axes [0] (sum): this thread is not "
            "bound to a mesh device (run the function with --mesh N or under "
            "mpirun)");
  t = take(invokeAsCompiled(
      [&] { _mlir_ciface_paddle_spmd_process_index(a.mesh.arg(), 0); }));
  EXPECT_EQ(t.message, "spmd_fn: process_index of mesh axis 0: this thread is "
                       "not bound to a mesh device (run the function with "
                       "--mesh N or under mpirun)");
}

TEST(SpmdDeathTest, AnUnboundThreadOutsideInvokeAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  paddle_spmd_unbind();
  float x[2] = {1, 2}, y[4] = {};
  CallArgs a{MemRef(x, {2}), MemRef(y, {4}), I64List({0}), I64List({2})};
  EXPECT_DEATH(_mlir_ciface_paddle_spmd_all_gather(a.in.arg(), a.out.arg(),
                                                   a.mesh.arg(), a.axes.arg(),
                                                   PADDLE_F32, 0),
               "all_gather over mesh axes .0. .dim 0.: this thread is not "
               "bound to a mesh device");
}

TEST(Spmd, AMeshThatDiffersFailsEveryDevice) {
  std::vector<float> x(4 * 4, 1.0f), y(4 * 4);
  std::vector<CallArgs> args;
  for (int r = 0; r < 4; ++r)
    args.push_back({MemRef(&x[4 * r], {4}), MemRef(&y[4 * r], {4}),
                    I64List({0}), I64List({4})});
  auto results = onMesh({2, 2}, 2.0, [&](int r) {
    CallArgs &a = args[r];
    _mlir_ciface_paddle_spmd_all_reduce(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                        a.axes.arg(), PADDLE_F32,
                                        PADDLE_REDUCE_SUM);
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(results[r].code, PADDLE_INVALID_ARGUMENT);
    EXPECT_EQ(results[r].message,
              "spmd_fn: all_reduce over mesh axes [0] (sum): the module was "
              "partitioned for a mesh of shape [4], the run has a mesh of "
              "shape [2, 2]");
  }
}

TEST(Spmd, ADeviceThatFailsWakesTheOthersWithItsReason) {
  // 2x2: rows {0, 1} and {2, 3}. All reduce over their row (axis 1), which
  // splits the row communicators; then device 3 fails (a mesh that
  // differs) while device 2 waits for it in their row, and devices 0 and 1
  // go on to a collective over the whole mesh. Every device fails at once
  // (not after the 2 s timeout), naming device 3.
  const std::vector<int64_t> mesh = {2, 2};
  std::vector<float> x(4, 1.0f), y(4), z(4);
  std::vector<CallArgs> args, bad, whole;
  for (int r = 0; r < 4; ++r) {
    args.push_back(
        {MemRef(&x[r], {1}), MemRef(&y[r], {1}), I64List({1}), I64List(mesh)});
    bad.push_back(
        {MemRef(&x[r], {1}), MemRef(&y[r], {1}), I64List({1}), I64List({4})});
    whole.push_back({MemRef(&x[r], {1}), MemRef(&z[r], {1}), I64List({1, 0}),
                     I64List(mesh)});
  }
  auto start = std::chrono::steady_clock::now();
  auto results = onMesh(mesh, 2.0, [&](int r) {
    auto allReduce = [](CallArgs &a) {
      _mlir_ciface_paddle_spmd_all_reduce(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                          a.axes.arg(), PADDLE_F32,
                                          PADDLE_REDUCE_SUM);
    };
    allReduce(args[r]);
    allReduce(r == 3 ? bad[r] : args[r]);
    allReduce(whole[r]);
  });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 1.5);
  EXPECT_EQ(results[3].code, PADDLE_INVALID_ARGUMENT);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(results[r].code, PADDLE_ABORTED) << results[r].message;
    EXPECT_NE(results[r].message.find(
                  "failed: device 3 (mesh coordinates "
                  "[1, 1]): all_reduce over mesh axes [1] "
                  "(sum): the module was partitioned for "
                  "a mesh of shape [4], the run has a mesh of shape [2, 2]"),
              std::string::npos)
        << results[r].message;
  }
  // Device 2 waited in its row; 0 and 1 in the split for axes [1, 0].
  EXPECT_EQ(results[2].message.rfind("spmd_fn: all_reduce over mesh axes [1] "
                                     "(sum): rank 0 of 2: rank 1 failed: ",
                                     0),
            0u)
      << results[2].message;
  for (int r : {0, 1})
    EXPECT_EQ(results[r].message.rfind(
                  "spmd_fn: all_reduce over mesh axes [1, 0] (sum): rank " +
                      std::to_string(r) + " of 4: rank 3 failed: ",
                  0),
              0u)
        << results[r].message;
}

TEST(Spmd, ARankThatAbortsTheWorldFailsTheOthersCollectives) {
  // The host of device 1 fails outside compiled code and aborts the world;
  // the others are in a collective over the whole mesh.
  for (std::vector<int64_t> mesh :
       {std::vector<int64_t>{4}, std::vector<int64_t>{2, 2}}) {
    std::vector<float> x(4 * 2, 1.0f), y(4 * 8);
    std::vector<CallArgs> args;
    std::vector<int64_t> axes =
        mesh.size() == 1 ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1};
    for (int r = 0; r < 4; ++r)
      args.push_back({MemRef(&x[2 * r], {2}), MemRef(&y[8 * r], {8}),
                      I64List(axes), I64List(mesh)});
    auto start = std::chrono::steady_clock::now();
    auto results = onMesh(mesh, 2.0, [&](int r) {
      if (r == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        paddle_comm_abort(paddle_spmd_world(), "out of memory loading weights");
        return;
      }
      CallArgs &a = args[r];
      _mlir_ciface_paddle_spmd_all_gather(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                          a.axes.arg(), PADDLE_F32, 0);
    });
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    EXPECT_LT(seconds, 1.5);
    EXPECT_EQ(results[1].code, PADDLE_OK);
    std::string axesText = mesh.size() == 1 ? "[0]" : "[0, 1]";
    for (int r : {0, 2, 3}) {
      EXPECT_EQ(results[r].code, PADDLE_ABORTED) << results[r].message;
      EXPECT_EQ(results[r].message,
                "spmd_fn: all_gather over mesh axes " + axesText +
                    " (dim 0): rank " + std::to_string(r) +
                    " of 4: rank 1 failed: out of memory loading weights");
    }
  }
}

TEST(Spmd, AWorldAbortReachesASubgroupWaiterOnlyAtItsTimeout) {
  // 2x2: device 3's host aborts the world while device 2 waits for it in
  // their row's communicator (split from the world), which a world abort
  // does not wake: device 2 fails at the row's timeout, naming device 3's
  // rank in the row as missing. Devices 0 and 1 fail at once in their next
  // collective over the whole mesh. Nobody hangs.
  const std::vector<int64_t> mesh = {2, 2};
  std::vector<float> x(4, 1.0f), y(4);
  std::vector<CallArgs> row, whole;
  for (int r = 0; r < 4; ++r) {
    row.push_back(
        {MemRef(&x[r], {1}), MemRef(&y[r], {1}), I64List({1}), I64List(mesh)});
    whole.push_back({MemRef(&x[r], {1}), MemRef(&y[r], {1}), I64List({0, 1}),
                     I64List(mesh)});
  }
  auto allReduce = [](CallArgs &a) {
    _mlir_ciface_paddle_spmd_all_reduce(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                        a.axes.arg(), PADDLE_F32,
                                        PADDLE_REDUCE_SUM);
  };
  auto start = std::chrono::steady_clock::now();
  auto results = onMesh(mesh, 0.5, [&](int r) {
    allReduce(row[r]);
    if (r == 3) {
      paddle_comm_abort(paddle_spmd_world(), "out of memory");
      return;
    }
    allReduce(row[r]);
    allReduce(whole[r]);
  });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(results[3].code, PADDLE_OK);
  EXPECT_EQ(results[2].code, PADDLE_DEADLINE_EXCEEDED);
  EXPECT_EQ(results[2].message,
            "spmd_fn: all_reduce over mesh axes [1] (sum): rank 0 of 2: "
            "all_reduce timed out after 0.5 s: rank 1 did not arrive");
  for (int r : {0, 1}) {
    EXPECT_EQ(results[r].code, PADDLE_ABORTED);
    EXPECT_EQ(results[r].message,
              "spmd_fn: all_reduce over mesh axes [0, 1] (sum): rank " +
                  std::to_string(r) + " of 4: rank 3 failed: out of memory");
  }
}

TEST(Spmd, DevicesThatDisagreeAreNamed) {
  std::vector<float> x(2 * 4, 1.0f), y(2 * 4);
  std::vector<CallArgs> args;
  for (int r = 0; r < 2; ++r) {
    int64_t n = r == 0 ? 4 : 3;
    args.push_back({MemRef(&x[4 * r], {n}), MemRef(&y[4 * r], {n}),
                    I64List({0}), I64List({2})});
  }
  auto results = onMesh({2}, 2.0, [&](int r) {
    CallArgs &a = args[r];
    _mlir_ciface_paddle_spmd_all_reduce(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                        a.axes.arg(), PADDLE_F32,
                                        PADDLE_REDUCE_SUM);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].code, PADDLE_INVALID_ARGUMENT);
    EXPECT_NE(results[r].message.find(
                  "spmd_fn: all_reduce over mesh axes [0] (sum): rank " +
                  std::to_string(r) +
                  " of 2: ranks disagree on the collective: rank 0 asked for "
                  "all_reduce of 4 x f32 (sum), rank 1 for all_reduce of 3 x "
                  "f32 (sum)"),
              std::string::npos)
        << results[r].message;
  }
}

/// A bad call made by both devices of a 2-device mesh: each fails on its
/// own check, with `expected` after "spmd_fn: ".
void expectBadCall(const std::function<void(CallArgs &)> &callOne,
                   CallArgs proto, const std::string &expected,
                   paddle_status_code_t code = PADDLE_INVALID_ARGUMENT) {
  std::vector<CallArgs> args(2, proto);
  auto results = onMesh({2}, 2.0, [&](int r) { callOne(args[r]); });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].code, code) << results[r].message;
    EXPECT_EQ(results[r].message, "spmd_fn: " + expected);
  }
}

TEST(Spmd, BadArgumentsAreNamed) {
  // Every device reads the same buffers: nothing is written on a failure.
  std::vector<float> in(12, 1.0f), out(24);
  auto gather = [](int64_t dim, int32_t dtype = PADDLE_F32) {
    return [=](CallArgs &a) {
      _mlir_ciface_paddle_spmd_all_gather(a.in.arg(), a.out.arg(), a.mesh.arg(),
                                          a.axes.arg(), dtype, dim);
    };
  };
  auto args = [&](std::vector<int64_t> inShape, std::vector<int64_t> outShape,
                  std::vector<int64_t> axes = {0},
                  std::vector<int64_t> inStrides = {}) {
    return CallArgs{MemRef(in.data(), inShape, inStrides),
                    MemRef(out.data(), outShape), I64List(axes), I64List({2})};
  };
  expectBadCall(gather(0), args({2, 3}, {2, 3}),
                "all_gather over mesh axes [0] (dim 0): `out` has shape [2, "
                "3], expected [4, 3] (`in` [2, 3], 2 devices)");
  expectBadCall(gather(2), args({2, 3}, {4, 3}),
                "all_gather over mesh axes [0] (dim 2): dim 2 is outside the "
                "rank-2 `in`");
  expectBadCall(gather(0), args({2, 3}, {4, 3}, {1}),
                "all_gather over mesh axes [1] (dim 0): mesh axis 1 is outside "
                "the 1-axis mesh");
  expectBadCall(gather(0), args({2, 3}, {4, 3}, {0, 0}),
                "all_gather over mesh axes [0, 0] (dim 0): mesh axis 0 is "
                "listed twice");
  expectBadCall(gather(0), args({2, 3}, {4, 3}, {0}, {1, 2}),
                "all_gather over mesh axes [0] (dim 0): `in` is not a dense "
                "row-major buffer (sizes [2, 3], strides [1, 2])");
  expectBadCall(gather(0, 99), args({2, 3}, {4, 3}),
                "all_gather over mesh axes [0] (dim 0): invalid dtype 99");
  expectBadCall(
      [](CallArgs &a) {
        _mlir_ciface_paddle_spmd_reduce_scatter(
            a.in.arg(), a.out.arg(), a.mesh.arg(), a.axes.arg(), PADDLE_F32,
            PADDLE_REDUCE_SUM, 0);
      },
      args({3, 2}, {1, 2}),
      "reduce_scatter over mesh axes [0] (sum, dim 0): dim 0 of `in` [3, 2] "
      "does not split into 2 blocks");
  expectBadCall(
      [](CallArgs &a) {
        _mlir_ciface_paddle_spmd_all_reduce(
            a.in.arg(), a.out.arg(), a.mesh.arg(), a.axes.arg(), PADDLE_F32, 9);
      },
      args({2, 3}, {2, 3}),
      "all_reduce over mesh axes [0] (?): invalid reduction 9");
  expectBadCall(
      [](CallArgs &a) {
        _mlir_ciface_paddle_spmd_all_to_all(a.in.arg(), a.out.arg(),
                                            a.mesh.arg(), a.axes.arg(),
                                            PADDLE_F32, 1, 0);
      },
      args({2, 4}, {2, 2}),
      "all_to_all over mesh axes [0] (split dim 1, concat dim 0): `out` has "
      "shape [2, 2], expected [4, 2] (`in` [2, 4], 2 devices)");
  expectBadCall(
      [](CallArgs &a) {
        _mlir_ciface_paddle_spmd_process_index(a.mesh.arg(), 3);
      },
      args({1}, {1}),
      "process_index of mesh axis 3: mesh axis 3 is outside the 1-axis mesh");
}

} // namespace
