//===- spmd_run.cpp - running an SPMD function on every device ------------===//
//
// See spmd_run.h. A device's input is a strided view of the full input (no
// copy: paddle_session_run packs views); its results are copied into the
// full results at the device's block. Under MPI the blocks travel by one
// all_gather per result, so that every rank holds the full results.
//
//===----------------------------------------------------------------------===//

#include "spmd_run.h"

#include "paddle_runtime/spmd.h"

#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace paddle_runtime {

paddle_status_t error(paddle_status_code_t code, const std::string &message) {
  return paddle_status_create(code, "%s", message.c_str());
}

namespace {

std::string takeMessage(paddle_status_t s) {
  std::string m = paddle_status_message(s);
  paddle_status_free(s);
  return m;
}

/// Device `rank`'s coordinates in the mesh (row-major).
std::vector<int64_t> coordinates(const paddle_spmd_signature_t &spmd,
                                 int64_t rank) {
  std::vector<int64_t> c(spmd.mesh_rank);
  for (int32_t a = spmd.mesh_rank - 1; a >= 0; --a) {
    c[a] = rank % spmd.mesh_shape[a];
    rank /= spmd.mesh_shape[a];
  }
  return c;
}

/// Where a device's block of one tensor is: per dim, the number of blocks
/// and the device's block.
struct Block {
  int64_t parts[PADDLE_MAX_RANK];
  int64_t index[PADDLE_MAX_RANK];
};

Block blockOf(const paddle_spmd_signature_t &spmd,
              const paddle_tensor_sharding_t &sharding, int32_t rank,
              const std::vector<int64_t> &coords) {
  Block b;
  for (int32_t d = 0; d < rank; ++d) {
    b.parts[d] = 1;
    b.index[d] = 0;
    for (int k = 0; k < PADDLE_MAX_MESH_RANK && sharding.split[d][k] >= 0;
         ++k) {
      int a = sharding.split[d][k];
      b.parts[d] *= spmd.mesh_shape[a];
      b.index[d] = b.index[d] * spmd.mesh_shape[a] + coords[a];
    }
  }
  return b;
}

/// Whether `device` holds the first copy of its block of a tensor split as
/// `sharding`: the devices that differ only along mesh axes that split no
/// dim hold equal blocks, and the one at coordinate 0 of those axes is
/// the first.
bool firstCopy(const paddle_spmd_signature_t &spmd,
               const paddle_tensor_sharding_t &sharding, int32_t rank,
               int64_t device) {
  bool splits[PADDLE_MAX_MESH_RANK] = {};
  for (int32_t d = 0; d < rank; ++d)
    for (int k = 0; k < PADDLE_MAX_MESH_RANK && sharding.split[d][k] >= 0; ++k)
      splits[sharding.split[d][k]] = true;
  std::vector<int64_t> coords = coordinates(spmd, device);
  for (int32_t a = 0; a < spmd.mesh_rank; ++a)
    if (!splits[a] && coords[a] != 0)
      return false;
  return true;
}

/// Whether a tensor split as `sharding` is whole on every device.
bool isWhole(const paddle_tensor_sharding_t &sharding, int32_t rank) {
  for (int32_t d = 0; d < rank; ++d)
    if (sharding.split[d][0] >= 0)
      return false;
  return true;
}

std::string axesOf(const paddle_tensor_sharding_t &sharding, int32_t d) {
  std::string s = "[";
  for (int k = 0; k < PADDLE_MAX_MESH_RANK && sharding.split[d][k] >= 0; ++k)
    s += (k ? ", " : "") + std::to_string(sharding.split[d][k]);
  return s + "]";
}

/// Copies the box `extent` at `srcStart` of a dense `src` of `srcShape` to
/// `dstStart` of a dense `dst` of `dstShape`.
void copyBox(const char *src, const int64_t *srcShape, const int64_t *srcStart,
             char *dst, const int64_t *dstShape, const int64_t *dstStart,
             const int64_t *extent, int32_t rank, size_t elementSize) {
  if (rank == 0) {
    memcpy(dst, src, elementSize);
    return;
  }
  // Row strides in bytes.
  size_t srcStride = elementSize, dstStride = elementSize;
  for (int32_t d = 1; d < rank; ++d) {
    srcStride *= srcShape[d];
    dstStride *= dstShape[d];
  }
  src += srcStart[0] * srcStride;
  dst += dstStart[0] * dstStride;
  if (rank == 1) {
    memcpy(dst, src, extent[0] * elementSize);
    return;
  }
  for (int64_t i = 0; i < extent[0]; ++i)
    copyBox(src + i * srcStride, srcShape + 1, srcStart + 1,
            dst + i * dstStride, dstShape + 1, dstStart + 1, extent + 1,
            rank - 1, elementSize);
}

/// One device's part of a call: its input views and results.
struct DevicePart {
  std::vector<paddle_tensor_t> inputs;
  std::vector<std::vector<int64_t>> strides;
  std::vector<paddle_tensor_t> outputs;
  ~DevicePart() {
    for (auto &t : outputs)
      paddle_tensor_free(&t);
  }
};

/// Device `device`'s views of the full inputs.
paddle_status_t takeInputs(const paddle_function_signature_t &sig,
                           const paddle_tensor_t *inputs, int64_t device,
                           DevicePart &part) {
  const paddle_spmd_signature_t &spmd = *sig.spmd;
  std::vector<int64_t> coords = coordinates(spmd, device);
  part.inputs.resize(sig.num_inputs);
  part.strides.resize(sig.num_inputs);
  for (int32_t i = 0; i < sig.num_inputs; ++i) {
    const paddle_tensor_t &full = inputs[i];
    if (full.rank != sig.inputs[i].rank)
      return error(PADDLE_INVALID_ARGUMENT,
                   "input " + std::to_string(i) + " has rank " +
                       std::to_string(full.rank) + ", expected " +
                       std::to_string(sig.inputs[i].rank));
    Block b = blockOf(spmd, spmd.inputs[i], full.rank, coords);
    std::vector<int64_t> &strides = part.strides[i];
    strides.resize(full.rank);
    // The full input's strides (dense row-major unless given).
    int64_t stride = 1;
    for (int32_t d = full.rank - 1; d >= 0; --d) {
      strides[d] = full.strides ? full.strides[d] : stride;
      stride *= full.shape[d];
    }
    paddle_tensor_t view = full;
    char *data = static_cast<char *>(full.data);
    for (int32_t d = 0; d < full.rank; ++d) {
      if (full.shape[d] % b.parts[d] != 0)
        return error(
            PADDLE_INVALID_ARGUMENT,
            "input " + std::to_string(i) + ": dim " + std::to_string(d) +
                " of size " + std::to_string(full.shape[d]) +
                " is split over mesh axes " + axesOf(spmd.inputs[i], d) + " (" +
                std::to_string(b.parts[d]) + " devices of the " +
                meshName(spmd) + "): not a multiple");
      view.shape[d] = full.shape[d] / b.parts[d];
      data += b.index[d] * view.shape[d] * strides[d] *
              (int64_t)paddle_dtype_size(full.dtype);
    }
    view.data = data;
    view.strides = strides.data();
    part.inputs[i] = view;
  }
  return nullptr;
}

/// Writes device `device`'s block `part` of result `o` into the full
/// result, allocating it at the first block. Only the first copy of each
/// block is written (the others are equal); a whole result is taken over
/// from the first device that has it, without a copy.
paddle_status_t placeOutput(const paddle_function_signature_t &sig,
                            int64_t device, int32_t o, paddle_tensor_t &part,
                            paddle_tensor_t &full) {
  const paddle_spmd_signature_t &spmd = *sig.spmd;
  if (!firstCopy(spmd, spmd.outputs[o], part.rank, device))
    return nullptr;
  if (isWhole(spmd.outputs[o], part.rank) && !part.strides && !full.data) {
    full = part;
    part = paddle_tensor_t{};
    return nullptr;
  }
  Block b =
      blockOf(spmd, spmd.outputs[o], part.rank, coordinates(spmd, device));
  int64_t shape[PADDLE_MAX_RANK], start[PADDLE_MAX_RANK],
      zero[PADDLE_MAX_RANK] = {};
  for (int32_t d = 0; d < part.rank; ++d) {
    shape[d] = part.shape[d] * b.parts[d];
    start[d] = b.index[d] * part.shape[d];
  }
  if (!full.data)
    if (paddle_status_t s =
            paddle_tensor_alloc(&full, part.dtype, part.rank, shape))
      return s;
  copyBox(static_cast<const char *>(part.data), part.shape, zero,
          static_cast<char *>(full.data), full.shape, start, part.shape,
          part.rank, paddle_dtype_size(part.dtype));
  return nullptr;
}

/// Runs device `device`'s part on `comm` (bound to the calling thread).
paddle_status_t runPart(paddle_session_t session, int32_t index,
                        const paddle_function_signature_t &sig,
                        const paddle_tensor_t *inputs, paddle_comm_t comm,
                        int64_t device, DevicePart &part) {
  if (paddle_status_t s = takeInputs(sig, inputs, device, part))
    return s;
  if (paddle_status_t s =
          paddle_spmd_bind(comm, sig.spmd->mesh_rank, sig.spmd->mesh_shape))
    return s;
  part.outputs.assign(sig.num_outputs, paddle_tensor_t{});
  paddle_status_t s =
      paddle_session_run(session, index, part.inputs.data(), sig.num_inputs,
                         part.outputs.data(), sig.num_outputs);
  paddle_spmd_unbind();
  return s;
}

/// The first failure that is a cause, not another device's abort.
paddle_status_t firstCause(std::vector<paddle_status_t> &statuses) {
  int64_t pick = -1;
  for (size_t d = 0; d < statuses.size(); ++d) {
    if (!statuses[d])
      continue;
    if (pick < 0 || (paddle_status_code(statuses[pick]) == PADDLE_ABORTED &&
                     paddle_status_code(statuses[d]) != PADDLE_ABORTED))
      pick = d;
  }
  if (pick < 0)
    return nullptr;
  paddle_status_code_t code = paddle_status_code(statuses[pick]);
  std::string message = "device " + std::to_string(pick) + ": " +
                        paddle_status_message(statuses[pick]);
  for (auto &s : statuses)
    paddle_status_free(s);
  return error(code, message);
}

/// Threads that run the devices of in-process meshes, kept between calls
/// (a thread started per call costs its start and, worse, refaults the
/// pages of its malloc arena every call). A call takes idle ones, or
/// starts more; concurrent calls get different threads.
class DeviceThreads {
  struct Worker {
    std::mutex mu;
    std::condition_variable cv;
    std::function<void()> task;
    bool stop = false;
    std::thread thread;
    void loop() {
      std::unique_lock<std::mutex> lock(mu);
      for (;;) {
        cv.wait(lock, [&] { return stop || task; });
        if (!task)
          return;
        std::function<void()> t = std::move(task);
        task = nullptr;
        lock.unlock();
        t();
        lock.lock();
      }
    }
  };
  std::mutex mu;
  std::vector<std::unique_ptr<Worker>> all;
  std::vector<Worker *> idle;

public:
  ~DeviceThreads() {
    for (auto &w : all) {
      {
        std::lock_guard<std::mutex> lock(w->mu);
        w->stop = true;
      }
      w->cv.notify_one();
      w->thread.join();
    }
  }

  /// Runs tasks[i] on threads of their own and `here` on the calling
  /// thread; returns once all ended. Throws std::system_error when a
  /// thread cannot start; then nothing ran.
  void run(std::vector<std::function<void()>> tasks,
           const std::function<void()> &here) {
    std::vector<Worker *> mine;
    {
      std::lock_guard<std::mutex> lock(mu);
      while (mine.size() < tasks.size() && !idle.empty()) {
        mine.push_back(idle.back());
        idle.pop_back();
      }
      try {
        while (mine.size() < tasks.size()) {
          auto w = std::make_unique<Worker>();
          w->thread = std::thread(&Worker::loop, w.get());
          mine.push_back(w.get());
          all.push_back(std::move(w));
        }
      } catch (...) {
        idle.insert(idle.end(), mine.begin(), mine.end());
        throw;
      }
    }
    std::mutex doneMu;
    std::condition_variable doneCv;
    size_t left = tasks.size();
    for (size_t i = 0; i < tasks.size(); ++i) {
      {
        std::lock_guard<std::mutex> lock(mine[i]->mu);
        mine[i]->task = [&, i] {
          tasks[i]();
          std::lock_guard<std::mutex> lock(doneMu);
          if (--left == 0)
            doneCv.notify_one();
        };
      }
      mine[i]->cv.notify_one();
    }
    here();
    {
      std::unique_lock<std::mutex> lock(doneMu);
      doneCv.wait(lock, [&] { return left == 0; });
    }
    std::lock_guard<std::mutex> lock(mu);
    idle.insert(idle.end(), mine.begin(), mine.end());
  }
};

DeviceThreads &deviceThreads() {
  static DeviceThreads threads;
  return threads;
}

paddle_status_t runInProcess(paddle_session_t session, int32_t index,
                             const paddle_function_signature_t &sig,
                             const paddle_tensor_t *inputs,
                             paddle_tensor_t *outputs, double timeout) {
  int64_t devices = meshDevices(*sig.spmd);
  paddle_local_group_t group = nullptr;
  if (paddle_status_t s =
          paddle_local_group_create((int)devices, timeout, &group))
    return s;
  std::unique_ptr<paddle_local_group_s, void (*)(paddle_local_group_t)> owner(
      group, paddle_local_group_release);
  std::vector<DevicePart> parts(devices);
  std::vector<paddle_status_t> statuses(devices, nullptr);
  std::vector<paddle_comm_t> comms(devices, nullptr);
  for (int64_t d = 0; d < devices; ++d)
    if (paddle_status_t s = paddle_local_group_comm(group, (int)d, &comms[d]))
      return s;
  auto work = [&](int64_t d) {
    statuses[d] = runPart(session, index, sig, inputs, comms[d], d, parts[d]);
    if (statuses[d])
      paddle_comm_abort(comms[d], paddle_status_message(statuses[d]));
  };
  // Device 0 runs on the calling thread (a one-device mesh needs no
  // other), the others on threads kept for that.
  std::vector<std::function<void()>> others;
  for (int64_t d = 1; d < devices; ++d)
    others.push_back([&work, d] { work(d); });
  try {
    deviceThreads().run(std::move(others), [&] { work(0); });
  } catch (const std::system_error &e) {
    statuses[0] =
        error(PADDLE_INTERNAL,
              std::string("cannot start a device thread: ") + e.what());
  }
  if (paddle_status_t s = firstCause(statuses))
    return s;
  for (int64_t d = 0; d < devices; ++d)
    for (int32_t o = 0; o < sig.num_outputs; ++o)
      if (paddle_status_t s =
              placeOutput(sig, d, o, parts[d].outputs[o], outputs[o]))
        return s;
  return nullptr;
}

paddle_status_t runOnWorld(paddle_session_t session, int32_t index,
                           const paddle_function_signature_t &sig,
                           const paddle_tensor_t *inputs,
                           paddle_tensor_t *outputs, paddle_comm_t world) {
  int64_t devices = meshDevices(*sig.spmd);
  if (paddle_comm_size(world) != devices)
    return error(PADDLE_INVALID_ARGUMENT,
                 std::string("function '") + sig.name +
                     "' is partitioned for a " + meshName(*sig.spmd) + " (" +
                     std::to_string(devices) + " devices), but the run has " +
                     std::to_string(paddle_comm_size(world)) +
                     " processes (mpirun -np " + std::to_string(devices) + ")");
  int rank = paddle_comm_rank(world);
  DevicePart part;
  if (paddle_status_t s =
          runPart(session, index, sig, inputs, world, rank, part)) {
    std::string message = paddle_status_message(s);
    paddle_comm_abort(world, message.c_str());
    paddle_status_code_t code = paddle_status_code(s);
    paddle_status_free(s);
    return error(code, "rank " + std::to_string(rank) + ": " + message);
  }
  // Every rank's block of every split result, gathered everywhere; a
  // whole result is already here.
  for (int32_t o = 0; o < sig.num_outputs; ++o) {
    paddle_tensor_t &local = part.outputs[o];
    if (isWhole(sig.spmd->outputs[o], local.rank)) {
      if (paddle_status_t s = placeOutput(sig, 0, o, local, outputs[o]))
        return s;
      continue;
    }
    int64_t count = paddle_tensor_num_elements(&local);
    size_t bytes = count * paddle_dtype_size(local.dtype);
    std::vector<char> all(bytes * devices);
    if (paddle_status_t s = paddle_comm_all_gather(
            world, local.data, all.data(), count, local.dtype)) {
      std::string m = takeMessage(s);
      return error(PADDLE_INTERNAL,
                   "gathering result " + std::to_string(o) + ": " + m);
    }
    for (int64_t d = 0; d < devices; ++d) {
      paddle_tensor_t block = local;
      block.data = all.data() + d * bytes;
      block.strides = nullptr;
      if (paddle_status_t s = placeOutput(sig, d, o, block, outputs[o]))
        return s;
    }
  }
  return nullptr;
}

} // namespace

std::string meshName(const paddle_spmd_signature_t &spmd) {
  std::string s = "mesh of shape [";
  for (int32_t a = 0; a < spmd.mesh_rank; ++a)
    s += (a ? ", " : "") + std::to_string(spmd.mesh_shape[a]);
  return s + "]";
}

int64_t meshDevices(const paddle_spmd_signature_t &spmd) {
  int64_t n = 1;
  for (int32_t a = 0; a < spmd.mesh_rank; ++a)
    n *= spmd.mesh_shape[a];
  return n;
}

paddle_status_t runOnMesh(paddle_session_t session, int32_t index,
                          const paddle_function_signature_t &signature,
                          const paddle_tensor_t *inputs,
                          paddle_tensor_t *outputs, paddle_comm_t world,
                          double timeout_s) {
  if (!signature.spmd)
    return error(PADDLE_INVALID_ARGUMENT, std::string("function '") +
                                              signature.name +
                                              "' has no device mesh");
  for (int32_t o = 0; o < signature.num_outputs; ++o)
    outputs[o] = paddle_tensor_t{};
  paddle_status_t s =
      world
          ? runOnWorld(session, index, signature, inputs, outputs, world)
          : runInProcess(session, index, signature, inputs, outputs, timeout_s);
  if (s)
    for (int32_t o = 0; o < signature.num_outputs; ++o)
      paddle_tensor_free(&outputs[o]);
  return s;
}

} // namespace paddle_runtime

extern "C" paddle_status_t
paddle_session_run_spmd(paddle_session_t session, int32_t index,
                        const paddle_tensor_t *inputs, int32_t numInputs,
                        paddle_tensor_t *outputs, int32_t numOutputs,
                        paddle_comm_t world, double timeout) {
  using paddle_runtime::error;
  if (!session || !outputs || (numInputs > 0 && !inputs))
    return error(PADDLE_INVALID_ARGUMENT,
                 "paddle_session_run_spmd: null session, inputs or outputs");
  const paddle_function_signature_t *sig =
      paddle_executable_function(paddle_session_executable(session), index);
  if (!sig)
    return error(PADDLE_NOT_FOUND, "paddle_session_run_spmd: no function " +
                                       std::to_string(index));
  if (numInputs != sig->num_inputs || numOutputs != sig->num_outputs)
    return error(PADDLE_INVALID_ARGUMENT,
                 std::string(sig->name) + ": takes " +
                     std::to_string(sig->num_inputs) + " inputs and returns " +
                     std::to_string(sig->num_outputs) + " results; " +
                     std::to_string(numInputs) + " and " +
                     std::to_string(numOutputs) + " given");
  if (!world && !(timeout > 0))
    return error(PADDLE_INVALID_ARGUMENT,
                 "paddle_session_run_spmd: the timeout must be above 0");
  return paddle_runtime::runOnMesh(session, index, *sig, inputs, outputs, world,
                                   timeout);
}
