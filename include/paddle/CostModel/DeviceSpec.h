//===- DeviceSpec.h - what a device can do, read from JSON -------*- C++
//-*-===//
//
// A device spec holds the numbers the cost model needs: peak arithmetic rate
// per element type, memory and cache bandwidths, the fixed cost of one kernel
// call and the link used by collectives. Specs are JSON files (format in
// docs/cost-model.md); the ones in specs/devices/ are built into the tools
// under their file names, so `device=h200` works from any directory.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_COSTMODEL_DEVICESPEC_H
#define PADDLE_COSTMODEL_DEVICESPEC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::paddle {

enum class DeviceKind { Cpu, Gpu };

/// Element types a spec may give a peak for. Every other element type of the
/// paddle dialect maps onto one of these (see peakFlops).
enum class SpecDType { F64, F32, F16, BF16, I8, I32, I64 };

/// "f32", "bf16", ... (the JSON keys of "peak_flops_per_s").
llvm::StringRef stringifySpecDType(SpecDType type);
std::optional<SpecDType> parseSpecDType(llvm::StringRef name);

struct CacheLevel {
  std::string name;
  /// Capacity of the whole level on the device (all instances together).
  double sizeBytes = 0;
  /// Aggregate bandwidth of the level over all cores.
  double bandwidthBytesPerS = 0;
};

/// The interconnect collectives run over (alpha-beta model).
struct LinkSpec {
  /// Per-device bandwidth in one direction.
  double bandwidthBytesPerS = 0;
  /// Start-up cost of one message (alpha).
  double latencyS = 0;
};

/// The oneDNN library path of the CPU pipeline (docs/onednn.md), as the
/// choice between it and our generated code sees it (JSON "onednn").
struct OneDnnSpec {
  /// Fraction of the f32 peak oneDNN's matmul and convolution reach on
  /// compute-bound problems, per core ("f32_efficiency", in (0, 1]).
  double f32Efficiency = 0;
  /// Fraction of the bf16 peak oneDNN reaches on bf16 inputs (AMX or
  /// AVX512-BF16 kernels; "bf16_efficiency", optional, in (0, 1]). Absent:
  /// f32Efficiency.
  std::optional<double> bf16Efficiency;
  /// What one oneDNN call costs on top of a generated kernel of the same
  /// op: primitive cache lookup, memory objects, stream, OpenMP team
  /// ("call_overhead_s").
  double callOverheadS = 0;
};

/// How close our generated matmul and convolution loops come to the f32
/// peak, per core (JSON "codegen"; fractions in (0, 1]).
struct CodegenSpec {
  /// Ops paddle-tile-and-vectorize takes: register-tiled FMA kernels
  /// ("tiled_f32_efficiency").
  double tiledF32Efficiency = 0;
  /// Every other matmul and convolution: the scalar loops of
  /// convert-linalg-to-parallel-loops, as far as LLVM vectorizes them
  /// ("scalar_f32_efficiency").
  double scalarF32Efficiency = 0;
  /// Fraction of the roofline bandwidth our loops reach where memory bounds
  /// them ("memory_efficiency"): a thin matmul (1 x K x N) streams B through
  /// register tiles of one row, strided by K panels, far from a copy's rate.
  double memoryEfficiency = 0;
};

struct DeviceSpec {
  std::string name;
  DeviceKind kind = DeviceKind::Cpu;
  int64_t cores = 1;
  /// Peak of the whole device (all cores / SMs), per element type. "f32" is
  /// always present.
  std::map<SpecDType, double> peakFlopsPerS;
  /// Main memory (DRAM / HBM) bandwidth.
  double memoryBandwidthBytesPerS = 0;
  /// From the innermost level out, sorted by size.
  std::vector<CacheLevel> caches;
  /// Fixed cost of one kernel: a CPU parallel-loop fork/join or a GPU launch.
  double callOverheadS = 0;
  LinkSpec link;
  /// Absent: the device has no oneDNN path (GPUs), so generated code runs
  /// every op unless a tool forces the library. Present only together with
  /// `codegen`, which it is compared with.
  std::optional<OneDnnSpec> onednn;
  std::optional<CodegenSpec> codegen;
  std::string notes;
  std::string source;
  /// The CPU a calibrated spec was measured on (/proc/cpuinfo's model
  /// name; JSON "cpu_model", optional).
  std::string cpuModel;

  /// Peak FLOP/s for `type`. A type the spec leaves out uses f32's peak
  /// (f64: half of it), the rate our code generation reaches on CPUs that
  /// compute f16/bf16/integers through f32-wide vector units.
  double peakFlops(SpecDType type) const;
};

/// Parses a spec from JSON text. `origin` names the file in messages, which
/// also give the JSON path of a bad field and what was expected, e.g.
/// "h200.json: $.peak_flops_per_s.f32: expected a number >= 0, got string".
llvm::Expected<DeviceSpec> parseDeviceSpec(llvm::StringRef text,
                                           llvm::StringRef origin);

/// Reads and parses the spec file at `path`.
llvm::Expected<DeviceSpec> loadDeviceSpec(llvm::StringRef path);

/// Names of the specs built into the tools (specs/devices/*.json).
std::vector<std::string> builtinDeviceNames();

/// A built-in spec by name, or, when `nameOrPath` is not one, the spec file
/// at that path. The error of an unknown name lists the built-in ones.
llvm::Expected<DeviceSpec> resolveDeviceSpec(llvm::StringRef nameOrPath);

/// Where `paddle-calibrate --install` keeps this machine's spec:
/// $XDG_CACHE_HOME/paddle-mlir/host.json (default ~/.cache/...); empty
/// when there is no home directory.
std::string getHostSpecPath();

/// This CPU's model name (/proc/cpuinfo), or empty.
std::string getHostCpuModel();

/// The installed host spec when it was measured on this CPU model: a file
/// that is missing, does not parse or names another CPU (a home directory
/// shared between machines) gives nullopt.
std::optional<DeviceSpec> loadInstalledHostSpec();

/// A cluster of identical devices in nodes (specs/clusters/*.json, format
/// in docs/cost-model.md): collectives inside a node run over its links
/// (NVLink), those between nodes over the network; the auto-sharding
/// search prices each mesh axis with the link it crosses.
struct ClusterSpec {
  std::string name;
  /// A device spec: a built-in name or a path (resolveDeviceSpec).
  std::string device;
  int64_t nodes = 1;
  int64_t devicesPerNode = 1;
  /// Memory of one device that a plan may use.
  double memoryBytesPerDevice = 0;
  /// Per device and direction, inside a node and between nodes.
  LinkSpec intraNode;
  LinkSpec interNode;
  std::string notes;
  std::string source;

  int64_t numDevices() const { return nodes * devicesPerNode; }
  /// The link of a collective among the devices that differ only in their
  /// index along mesh `axes` of a `mesh` (devices numbered row-major from
  /// 0): intraNode when every such group lies inside one node.
  const LinkSpec &linkFor(llvm::ArrayRef<int64_t> mesh,
                          llvm::ArrayRef<int64_t> axes) const;
};

llvm::Expected<ClusterSpec> parseClusterSpec(llvm::StringRef text,
                                             llvm::StringRef origin);
/// Reads and parses the cluster spec file at `path`.
llvm::Expected<ClusterSpec> loadClusterSpec(llvm::StringRef path);
/// A built-in cluster (specs/clusters/*.json) by name, or a spec file at a
/// path; the error of an unknown name lists the built-in ones.
llvm::Expected<ClusterSpec> resolveClusterSpec(llvm::StringRef nameOrPath);
std::vector<std::string> builtinClusterNames();

/// The spec as JSON text that parseDeviceSpec reads back.
std::string serializeDeviceSpec(const DeviceSpec &spec);

} // namespace mlir::paddle

#endif // PADDLE_COSTMODEL_DEVICESPEC_H
