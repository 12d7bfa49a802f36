//===- DeviceSpec.cpp - device specs from JSON ----------------------------===//
//
// The JSON is read with nlohmann_json. Every field is checked before it is
// read, so a bad spec is an error naming the file, the JSON path of the field
// and what was expected, never an exception escaping or an abort. Only the
// parser itself throws (on malformed text); that is caught here, which is why
// this file is built with -fexceptions while the rest of the project is not.
//
//===----------------------------------------------------------------------===//

#include "paddle/CostModel/DeviceSpec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

using namespace mlir::paddle;
using json = nlohmann::ordered_json;

namespace {

const char *const kDTypeNames[] = {"f64", "f32", "f16", "bf16",
                                   "i8",  "i32", "i64"};

/// Reads one JSON object, remembering the first error with its JSON path.
class Reader {
public:
  explicit Reader(std::string origin) : origin(std::move(origin)) {}

  bool failed() const { return !error.empty(); }
  llvm::Error takeError() {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   origin + ": " + error);
  }

  void fail(const std::string &path, const std::string &message) {
    if (error.empty())
      error = path + ": " + message;
  }

  static std::string typeName(const json &value) {
    return value.is_number() ? "number" : std::string(value.type_name());
  }

  /// The member `key` of `object`, or null (after an error) when it is
  /// missing and required.
  const json *member(const json &object, const std::string &path,
                     const std::string &key, bool required) {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required)
        fail(path, "missing required field \"" + key + "\"");
      return nullptr;
    }
    return &*it;
  }

  bool isObject(const json &value, const std::string &path) {
    if (value.is_object())
      return true;
    fail(path, "expected an object, got " + typeName(value));
    return false;
  }

  /// A finite number >= 0 (> 0 when `positive`).
  std::optional<double> number(const json &value, const std::string &path,
                               bool positive = false) {
    if (!value.is_number()) {
      fail(path, std::string("expected a number ") +
                     (positive ? "> 0" : ">= 0") + ", got " + typeName(value));
      return std::nullopt;
    }
    double x = value.get<double>();
    if (!std::isfinite(x) || x < 0 || (positive && x == 0)) {
      fail(path, std::string("expected a number ") +
                     (positive ? "> 0" : ">= 0") + ", got " + value.dump());
      return std::nullopt;
    }
    return x;
  }

  /// A fraction in (0, 1]: an efficiency relative to a peak.
  std::optional<double> fraction(const json &value, const std::string &path) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) ||
        value.get<double>() <= 0 || value.get<double>() > 1) {
      fail(path, "expected a number in (0, 1] (a fraction of a peak), got " +
                     (value.is_number() ? value.dump() : typeName(value)));
      return std::nullopt;
    }
    return value.get<double>();
  }

  std::optional<std::string> string(const json &value,
                                    const std::string &path) {
    if (!value.is_string()) {
      fail(path, "expected a string, got " + typeName(value));
      return std::nullopt;
    }
    return value.get<std::string>();
  }

private:
  std::string origin;
  std::string error;
};

void checkKnownKeys(Reader &reader, const json &object, const std::string &path,
                    std::initializer_list<const char *> known) {
  for (auto it = object.begin(); it != object.end(); ++it)
    if (std::none_of(known.begin(), known.end(),
                     [&](const char *k) { return it.key() == k; })) {
      std::string list;
      for (const char *k : known)
        list += std::string(list.empty() ? "" : ", ") + k;
      reader.fail(path,
                  "unknown field \"" + it.key() + "\" (known: " + list + ")");
    }
}

std::optional<LinkSpec> readLink(Reader &r, const json &parent,
                                 const std::string &parentPath,
                                 const std::string &key, bool required) {
  const json *link = r.member(parent, parentPath, key, required);
  std::string path = parentPath + "." + key;
  if (!link || !r.isObject(*link, path))
    return std::nullopt;
  checkKnownKeys(r, *link, path, {"bandwidth_bytes_per_s", "latency_s"});
  LinkSpec spec;
  if (const json *v = r.member(*link, path, "bandwidth_bytes_per_s", true))
    if (auto x = r.number(*v, path + ".bandwidth_bytes_per_s", true))
      spec.bandwidthBytesPerS = *x;
  if (const json *v = r.member(*link, path, "latency_s", true))
    if (auto x = r.number(*v, path + ".latency_s"))
      spec.latencyS = *x;
  return spec;
}

std::optional<DeviceSpec> read(Reader &r, const json &root) {
  DeviceSpec spec;
  if (!r.isObject(root, "$"))
    return std::nullopt;
  checkKnownKeys(r, root, "$",
                 {"name", "kind", "cores", "peak_flops_per_s",
                  "memory_bandwidth_bytes_per_s", "caches", "call_overhead_s",
                  "link", "onednn", "codegen", "notes", "source", "cpu_model"});

  if (const json *v = r.member(root, "$", "name", true))
    if (auto s = r.string(*v, "$.name"))
      spec.name = *s;
  if (const json *v = r.member(root, "$", "kind", true))
    if (auto s = r.string(*v, "$.kind")) {
      if (*s == "cpu")
        spec.kind = DeviceKind::Cpu;
      else if (*s == "gpu")
        spec.kind = DeviceKind::Gpu;
      else
        r.fail("$.kind", "expected \"cpu\" or \"gpu\", got \"" + *s + "\"");
    }
  if (const json *v = r.member(root, "$", "cores", true)) {
    if (!v->is_number_integer() || v->get<int64_t>() <= 0)
      r.fail("$.cores", "expected an integer > 0, got " + v->dump());
    else
      spec.cores = v->get<int64_t>();
  }

  if (const json *peaks = r.member(root, "$", "peak_flops_per_s", true);
      peaks && r.isObject(*peaks, "$.peak_flops_per_s")) {
    for (auto it = peaks->begin(); it != peaks->end(); ++it) {
      std::string path = "$.peak_flops_per_s." + it.key();
      std::optional<SpecDType> type = parseSpecDType(it.key());
      if (!type) {
        r.fail(path, "unknown dtype \"" + it.key() +
                         "\" (known: f64, f32, f16, bf16, i8, i32, i64)");
        continue;
      }
      if (auto x = r.number(it.value(), path, /*positive=*/true))
        spec.peakFlopsPerS[*type] = *x;
    }
    if (!peaks->contains("f32"))
      r.fail("$.peak_flops_per_s", "missing required field \"f32\"");
  }

  if (const json *v = r.member(root, "$", "memory_bandwidth_bytes_per_s", true))
    if (auto x = r.number(*v, "$.memory_bandwidth_bytes_per_s", true))
      spec.memoryBandwidthBytesPerS = *x;

  if (const json *caches = r.member(root, "$", "caches", false)) {
    if (!caches->is_array()) {
      r.fail("$.caches", "expected an array, got " + Reader::typeName(*caches));
    } else {
      for (size_t i = 0; i < caches->size(); ++i) {
        std::string path = "$.caches[" + std::to_string(i) + "]";
        const json &level = (*caches)[i];
        if (!r.isObject(level, path))
          continue;
        checkKnownKeys(r, level, path,
                       {"name", "size_bytes", "bandwidth_bytes_per_s"});
        CacheLevel cache;
        if (const json *v = r.member(level, path, "name", true))
          if (auto s = r.string(*v, path + ".name"))
            cache.name = *s;
        if (const json *v = r.member(level, path, "size_bytes", true))
          if (auto x = r.number(*v, path + ".size_bytes", true))
            cache.sizeBytes = *x;
        if (const json *v =
                r.member(level, path, "bandwidth_bytes_per_s", true))
          if (auto x = r.number(*v, path + ".bandwidth_bytes_per_s", true))
            cache.bandwidthBytesPerS = *x;
        spec.caches.push_back(cache);
      }
      std::stable_sort(spec.caches.begin(), spec.caches.end(),
                       [](const CacheLevel &a, const CacheLevel &b) {
                         return a.sizeBytes < b.sizeBytes;
                       });
    }
  }

  if (const json *v = r.member(root, "$", "call_overhead_s", true))
    if (auto x = r.number(*v, "$.call_overhead_s"))
      spec.callOverheadS = *x;

  if (auto link = readLink(r, root, "$", "link", /*required=*/false))
    spec.link = *link;

  // The library-vs-codegen choice (docs/cost-model.md, "Library path").
  if (const json *onednn = r.member(root, "$", "onednn", false);
      onednn && r.isObject(*onednn, "$.onednn")) {
    checkKnownKeys(r, *onednn, "$.onednn",
                   {"f32_efficiency", "bf16_efficiency", "call_overhead_s"});
    OneDnnSpec lib;
    if (const json *v = r.member(*onednn, "$.onednn", "f32_efficiency", true))
      if (auto x = r.fraction(*v, "$.onednn.f32_efficiency"))
        lib.f32Efficiency = *x;
    if (const json *v = r.member(*onednn, "$.onednn", "bf16_efficiency", false))
      if (auto x = r.fraction(*v, "$.onednn.bf16_efficiency"))
        lib.bf16Efficiency = *x;
    if (const json *v = r.member(*onednn, "$.onednn", "call_overhead_s", true))
      if (auto x = r.number(*v, "$.onednn.call_overhead_s"))
        lib.callOverheadS = *x;
    spec.onednn = lib;
    if (!root.contains("codegen"))
      r.fail("$", "missing required field \"codegen\" (the \"onednn\" path "
                  "is compared with it)");
  }
  if (const json *codegen = r.member(root, "$", "codegen", false);
      codegen && r.isObject(*codegen, "$.codegen")) {
    checkKnownKeys(
        r, *codegen, "$.codegen",
        {"tiled_f32_efficiency", "scalar_f32_efficiency", "memory_efficiency"});
    CodegenSpec ours;
    if (const json *v =
            r.member(*codegen, "$.codegen", "tiled_f32_efficiency", true))
      if (auto x = r.fraction(*v, "$.codegen.tiled_f32_efficiency"))
        ours.tiledF32Efficiency = *x;
    if (const json *v =
            r.member(*codegen, "$.codegen", "scalar_f32_efficiency", true))
      if (auto x = r.fraction(*v, "$.codegen.scalar_f32_efficiency"))
        ours.scalarF32Efficiency = *x;
    if (const json *v =
            r.member(*codegen, "$.codegen", "memory_efficiency", true))
      if (auto x = r.fraction(*v, "$.codegen.memory_efficiency"))
        ours.memoryEfficiency = *x;
    spec.codegen = ours;
  }

  if (const json *v = r.member(root, "$", "notes", false))
    if (auto s = r.string(*v, "$.notes"))
      spec.notes = *s;
  if (const json *v = r.member(root, "$", "source", false))
    if (auto s = r.string(*v, "$.source"))
      spec.source = *s;
  if (const json *v = r.member(root, "$", "cpu_model", false))
    if (auto s = r.string(*v, "$.cpu_model"))
      spec.cpuModel = *s;

  if (r.failed())
    return std::nullopt;
  return spec;
}

std::optional<int64_t> positiveInteger(Reader &r, const json &value,
                                       const std::string &path) {
  if (!value.is_number_integer() || value.get<int64_t>() <= 0) {
    r.fail(path, "expected an integer > 0, got " + value.dump());
    return std::nullopt;
  }
  return value.get<int64_t>();
}

std::optional<ClusterSpec> readCluster(Reader &r, const json &root) {
  ClusterSpec spec;
  if (!r.isObject(root, "$"))
    return std::nullopt;
  checkKnownKeys(r, root, "$",
                 {"name", "device", "nodes", "devices_per_node",
                  "memory_bytes_per_device", "intra_node", "inter_node",
                  "notes", "source"});
  if (const json *v = r.member(root, "$", "name", true))
    if (auto s = r.string(*v, "$.name"))
      spec.name = *s;
  if (const json *v = r.member(root, "$", "device", true))
    if (auto s = r.string(*v, "$.device"))
      spec.device = *s;
  if (const json *v = r.member(root, "$", "nodes", true))
    if (auto n = positiveInteger(r, *v, "$.nodes"))
      spec.nodes = *n;
  if (const json *v = r.member(root, "$", "devices_per_node", true))
    if (auto n = positiveInteger(r, *v, "$.devices_per_node"))
      spec.devicesPerNode = *n;
  if (const json *v = r.member(root, "$", "memory_bytes_per_device", true))
    if (auto x = r.number(*v, "$.memory_bytes_per_device", true))
      spec.memoryBytesPerDevice = *x;
  if (auto link = readLink(r, root, "$", "intra_node", true))
    spec.intraNode = *link;
  // One node needs no network.
  bool oneNode = root.contains("nodes") && root["nodes"] == 1;
  if (auto link = readLink(r, root, "$", "inter_node", !oneNode))
    spec.interNode = *link;
  else if (oneNode)
    spec.interNode = spec.intraNode;
  if (const json *v = r.member(root, "$", "notes", false))
    if (auto s = r.string(*v, "$.notes"))
      spec.notes = *s;
  if (const json *v = r.member(root, "$", "source", false))
    if (auto s = r.string(*v, "$.source"))
      spec.source = *s;
  if (r.failed())
    return std::nullopt;
  return spec;
}

} // namespace

llvm::StringRef mlir::paddle::stringifySpecDType(SpecDType type) {
  return kDTypeNames[static_cast<int>(type)];
}

std::optional<SpecDType> mlir::paddle::parseSpecDType(llvm::StringRef name) {
  for (int i = 0, e = std::size(kDTypeNames); i < e; ++i)
    if (name == kDTypeNames[i])
      return static_cast<SpecDType>(i);
  return std::nullopt;
}

double DeviceSpec::peakFlops(SpecDType type) const {
  if (auto it = peakFlopsPerS.find(type); it != peakFlopsPerS.end())
    return it->second;
  double f32 = peakFlopsPerS.at(SpecDType::F32);
  return type == SpecDType::F64 ? f32 / 2 : f32;
}

/// `text` parsed as JSON and read by `read` (read or readCluster).
template <typename Spec>
static llvm::Expected<Spec>
parseSpec(llvm::StringRef text, llvm::StringRef origin,
          std::optional<Spec> (*read)(Reader &, const json &)) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::exception &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   origin + ": invalid JSON: " + e.what());
  }
  Reader reader(origin.str());
  std::optional<Spec> spec = read(reader, root);
  if (!spec)
    return reader.takeError();
  return *spec;
}

llvm::Expected<DeviceSpec>
mlir::paddle::parseDeviceSpec(llvm::StringRef text, llvm::StringRef origin) {
  return parseSpec<DeviceSpec>(text, origin, read);
}

/// The text of the spec file at `path` (`what`: "device spec", ...).
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readSpecFile(llvm::StringRef path, llvm::StringRef what) {
  // A spec is a small JSON file: a device node or FIFO (which may never
  // end) or anything over 1 MiB is not one.
  std::string prefix = ("cannot read " + what + " '" + path + "': ").str();
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return llvm::createStringError(ec, prefix + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        prefix + "not a regular file");
  if (status.getSize() > (1u << 20))
    return llvm::createStringError(
        std::make_error_code(std::errc::file_too_large),
        prefix + "larger than 1 MiB, not a " + what);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   prefix + buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<DeviceSpec> mlir::paddle::loadDeviceSpec(llvm::StringRef path) {
  auto buffer = readSpecFile(path, "device spec");
  if (!buffer)
    return buffer.takeError();
  return parseDeviceSpec((*buffer)->getBuffer(), path);
}

llvm::Expected<ClusterSpec>
mlir::paddle::loadClusterSpec(llvm::StringRef path) {
  auto buffer = readSpecFile(path, "cluster spec");
  if (!buffer)
    return buffer.takeError();
  return parseClusterSpec((*buffer)->getBuffer(), path);
}

std::string mlir::paddle::serializeDeviceSpec(const DeviceSpec &spec) {
  json root;
  root["name"] = spec.name;
  root["kind"] = spec.kind == DeviceKind::Cpu ? "cpu" : "gpu";
  root["cores"] = spec.cores;
  json peaks = json::object();
  for (auto [type, peak] : spec.peakFlopsPerS)
    peaks[stringifySpecDType(type).str()] = peak;
  root["peak_flops_per_s"] = peaks;
  root["memory_bandwidth_bytes_per_s"] = spec.memoryBandwidthBytesPerS;
  json caches = json::array();
  for (const CacheLevel &cache : spec.caches)
    caches.push_back({{"name", cache.name},
                      {"size_bytes", cache.sizeBytes},
                      {"bandwidth_bytes_per_s", cache.bandwidthBytesPerS}});
  root["caches"] = caches;
  root["call_overhead_s"] = spec.callOverheadS;
  // A spec without a link reads back with a zero one.
  if (spec.link.bandwidthBytesPerS > 0)
    root["link"] = {{"bandwidth_bytes_per_s", spec.link.bandwidthBytesPerS},
                    {"latency_s", spec.link.latencyS}};
  if (spec.onednn) {
    root["onednn"] = {{"f32_efficiency", spec.onednn->f32Efficiency},
                      {"call_overhead_s", spec.onednn->callOverheadS}};
    if (spec.onednn->bf16Efficiency)
      root["onednn"]["bf16_efficiency"] = *spec.onednn->bf16Efficiency;
  }
  if (spec.codegen)
    root["codegen"] = {
        {"tiled_f32_efficiency", spec.codegen->tiledF32Efficiency},
        {"scalar_f32_efficiency", spec.codegen->scalarF32Efficiency},
        {"memory_efficiency", spec.codegen->memoryEfficiency}};
  if (!spec.cpuModel.empty())
    root["cpu_model"] = spec.cpuModel;
  if (!spec.notes.empty())
    root["notes"] = spec.notes;
  if (!spec.source.empty())
    root["source"] = spec.source;
  return root.dump(2) + "\n";
}

std::string mlir::paddle::getHostSpecPath() {
  llvm::SmallString<256> path;
  if (const char *cache = std::getenv("XDG_CACHE_HOME"); cache && *cache) {
    path = cache;
  } else {
    const char *home = std::getenv("HOME");
    if (!home || !*home)
      return "";
    path = home;
    llvm::sys::path::append(path, ".cache");
  }
  llvm::sys::path::append(path, "paddle-mlir", "host.json");
  return std::string(path);
}

std::string mlir::paddle::getHostCpuModel() {
  auto buffer = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo");
  if (!buffer)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    auto [key, value] = line.split(':');
    if (key.trim() == "model name")
      return value.trim().str();
  }
  return "";
}

std::optional<DeviceSpec> mlir::paddle::loadInstalledHostSpec() {
  std::string path = getHostSpecPath();
  if (path.empty() || !llvm::sys::fs::exists(path))
    return std::nullopt;
  llvm::Expected<DeviceSpec> spec = loadDeviceSpec(path);
  if (!spec) {
    llvm::consumeError(spec.takeError());
    return std::nullopt;
  }
  std::string model = getHostCpuModel();
  if (model.empty() || spec->cpuModel != model)
    return std::nullopt;
  return std::move(*spec);
}

const LinkSpec &ClusterSpec::linkFor(llvm::ArrayRef<int64_t> mesh,
                                     llvm::ArrayRef<int64_t> axes) const {
  int64_t count = 1;
  for (int64_t n : mesh)
    count *= n;
  // Device i and the first device of its group (its indices along `axes`
  // zeroed) must share a node, for every i.
  for (int64_t i = 0; i < count; ++i) {
    int64_t base = i, stride = 1;
    for (int64_t a = mesh.size() - 1; a >= 0; --a) {
      int64_t index = (i / stride) % mesh[a];
      if (llvm::is_contained(axes, a))
        base -= index * stride;
      stride *= mesh[a];
    }
    if (i / devicesPerNode != base / devicesPerNode)
      return interNode;
  }
  return intraNode;
}

llvm::Expected<ClusterSpec>
mlir::paddle::parseClusterSpec(llvm::StringRef text, llvm::StringRef origin) {
  return parseSpec<ClusterSpec>(text, origin, readCluster);
}
