//===- CostModelTest.cpp - device specs, roofline, alpha-beta -------------===//
//
// Expected values are computed by hand in the comments next to them.
//
//===----------------------------------------------------------------------===//

#include "paddle/CostModel/CostModel.h"
#include "paddle/CostModel/DeviceSpec.h"

#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::paddle;

namespace {

/// A spec with round numbers: 1 GFLOP/s f32, 2 GFLOP/s bf16, 1 GB/s DRAM, a
/// 1000-byte cache at 10 GB/s, 1 us per call, a 1 GB/s link with 1 us
/// latency.
const char *kSpec = R"json({
  "name": "test", "kind": "cpu", "cores": 2,
  "peak_flops_per_s": {"f32": 1e9, "bf16": 2e9},
  "memory_bandwidth_bytes_per_s": 1e9,
  "caches": [{"name": "L1", "size_bytes": 1000, "bandwidth_bytes_per_s": 1e10}],
  "call_overhead_s": 1e-6,
  "link": {"bandwidth_bytes_per_s": 1e9, "latency_s": 1e-6}
})json";

DeviceSpec testSpec() {
  llvm::Expected<DeviceSpec> spec = parseDeviceSpec(kSpec, "test.json");
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  return *spec;
}

/// The error message of parsing `text`, or "" when it parses.
std::string parseError(const std::string &text) {
  llvm::Expected<DeviceSpec> spec = parseDeviceSpec(text, "bad.json");
  if (spec)
    return "";
  return llvm::toString(spec.takeError());
}

/// kSpec with `from` replaced by `to`.
std::string edited(const std::string &from, const std::string &to) {
  std::string text = kSpec;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(DeviceSpecTest, ParsesAllFields) {
  DeviceSpec spec = testSpec();
  EXPECT_EQ(spec.name, "test");
  EXPECT_EQ(spec.kind, DeviceKind::Cpu);
  EXPECT_EQ(spec.cores, 2);
  EXPECT_DOUBLE_EQ(spec.peakFlops(SpecDType::F32), 1e9);
  EXPECT_DOUBLE_EQ(spec.peakFlops(SpecDType::BF16), 2e9);
  // Missing types fall back to f32 (f64: half).
  EXPECT_DOUBLE_EQ(spec.peakFlops(SpecDType::I8), 1e9);
  EXPECT_DOUBLE_EQ(spec.peakFlops(SpecDType::F64), 5e8);
  ASSERT_EQ(spec.caches.size(), 1u);
  EXPECT_DOUBLE_EQ(spec.caches[0].sizeBytes, 1000);
  EXPECT_DOUBLE_EQ(spec.link.latencyS, 1e-6);
}

TEST(DeviceSpecTest, MissingField) {
  EXPECT_EQ(parseError(edited("\"memory_bandwidth_bytes_per_s\": 1e9,", "")),
            "bad.json: $: missing required field "
            "\"memory_bandwidth_bytes_per_s\"");
  EXPECT_EQ(parseError(edited("\"f32\": 1e9, ", "")),
            "bad.json: $.peak_flops_per_s: missing required field \"f32\"");
  EXPECT_EQ(parseError(edited("\"latency_s\": 1e-6", "\"x\": 1")),
            "bad.json: $.link: unknown field \"x\" (known: "
            "bandwidth_bytes_per_s, latency_s)");
}

TEST(DeviceSpecTest, WrongType) {
  EXPECT_EQ(parseError(edited("\"f32\": 1e9", "\"f32\": \"fast\"")),
            "bad.json: $.peak_flops_per_s.f32: expected a number > 0, got "
            "string");
  EXPECT_EQ(parseError(edited("\"cores\": 2", "\"cores\": 2.5")),
            "bad.json: $.cores: expected an integer > 0, got 2.5");
  EXPECT_EQ(parseError(edited("\"kind\": \"cpu\"", "\"kind\": \"tpu\"")),
            "bad.json: $.kind: expected \"cpu\" or \"gpu\", got \"tpu\"");
  EXPECT_EQ(parseError(edited("\"caches\": [", "\"caches\": [3, ")),
            "bad.json: $.caches[0]: expected an object, got number");
  EXPECT_EQ(parseError("[1, 2]"), "bad.json: $: expected an object, got array");
}

TEST(DeviceSpecTest, NegativeNumber) {
  EXPECT_EQ(parseError(
                edited("\"call_overhead_s\": 1e-6", "\"call_overhead_s\": -1")),
            "bad.json: $.call_overhead_s: expected a number >= 0, got -1");
  EXPECT_EQ(parseError(edited("\"size_bytes\": 1000", "\"size_bytes\": 0")),
            "bad.json: $.caches[0].size_bytes: expected a number > 0, got 0");
}

TEST(DeviceSpecTest, UnknownDType) {
  EXPECT_EQ(parseError(edited("\"bf16\": 2e9", "\"fp8\": 2e9")),
            "bad.json: $.peak_flops_per_s.fp8: unknown dtype \"fp8\" (known: "
            "f64, f32, f16, bf16, i8, i32, i64)");
}

TEST(DeviceSpecTest, InvalidJsonAndFiles) {
  std::string error = parseError("{\"name\": ");
  EXPECT_EQ(error.rfind("bad.json: invalid JSON: ", 0), 0u) << error;
  llvm::Expected<DeviceSpec> missing =
      loadDeviceSpec("/nonexistent/dir/spec.json");
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(
      llvm::toString(missing.takeError())
          .rfind("cannot read device spec '/nonexistent/dir/spec.json': ", 0),
      0u);
  llvm::Expected<DeviceSpec> unknown = resolveDeviceSpec("tpu-v9");
  ASSERT_FALSE(bool(unknown));
  EXPECT_EQ(llvm::toString(unknown.takeError()),
            "unknown device 'tpu-v9': not a built-in spec (a100, h200, "
            "xeon-amx-2c) nor a path to a .json file");
}

TEST(DeviceSpecTest, BuiltinsLoadAndRoundTrip) {
  for (const std::string &name : builtinDeviceNames()) {
    llvm::Expected<DeviceSpec> spec = resolveDeviceSpec(name);
    ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
    EXPECT_EQ(spec->name, name);
    EXPECT_FALSE(spec->source.empty()) << name << " cites no source";
    llvm::Expected<DeviceSpec> again =
        parseDeviceSpec(serializeDeviceSpec(*spec), "round-trip");
    ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
    EXPECT_EQ(serializeDeviceSpec(*again), serializeDeviceSpec(*spec));
  }
  llvm::Expected<DeviceSpec> h200 = resolveDeviceSpec("h200");
  ASSERT_TRUE(bool(h200));
  EXPECT_DOUBLE_EQ(h200->memoryBandwidthBytesPerS, 4.8e12);
}

TEST(DeviceSpecTest, OptionalFieldsRoundTrip) {
  // Only the required fields: the serialized spec leaves the optional ones
  // out again (a zero link would not read back).
  llvm::Expected<DeviceSpec> spec = parseDeviceSpec(
      R"json({"name": "min", "kind": "cpu", "cores": 1,
              "peak_flops_per_s": {"f32": 1e9},
              "memory_bandwidth_bytes_per_s": 1e9, "call_overhead_s": 0})json",
      "min.json");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  llvm::Expected<DeviceSpec> again =
      parseDeviceSpec(serializeDeviceSpec(*spec), "round-trip");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->link.bandwidthBytesPerS, 0);
  EXPECT_FALSE(again->onednn.has_value());
}

TEST(RooflineTest, ComputeAndMemoryBound) {
  DeviceSpec spec = testSpec();
  OpCost cost;
  // 4e6 FLOPs / 1e9 = 4 ms; 2e6 bytes (> the 1000-byte cache) / 1e9 = 2 ms.
  cost.flops = 4e6;
  cost.bytes = 2e6;
  TimeEstimate t = estimateTime(cost, spec);
  EXPECT_DOUBLE_EQ(t.computeSeconds, 4e-3);
  EXPECT_DOUBLE_EQ(t.memorySeconds, 2e-3);
  EXPECT_DOUBLE_EQ(t.seconds, 4e-3 + 1e-6);
  EXPECT_EQ(t.bound, Bound::Compute);
  // In bf16 the peak doubles: 2 ms compute, a tie goes to compute.
  cost.computeType = SpecDType::BF16;
  EXPECT_EQ(estimateTime(cost, spec).bound, Bound::Compute);
  cost.bytes = 3e6;
  t = estimateTime(cost, spec);
  EXPECT_DOUBLE_EQ(t.seconds, 3e-3 + 1e-6);
  EXPECT_EQ(t.bound, Bound::Memory);
  // 800 bytes fit the cache: 800 / 1e10 = 80 ns; 100 FLOPs = 100 ns.
  OpCost small;
  small.flops = 100;
  small.bytes = 800;
  t = estimateTime(small, spec);
  EXPECT_DOUBLE_EQ(t.memorySeconds, 8e-8);
  EXPECT_DOUBLE_EQ(t.seconds, 1e-7 + 1e-6);
  // A view costs nothing at all.
  OpCost view;
  view.isKernel = false;
  t = estimateTime(view, spec);
  EXPECT_EQ(t.seconds, 0);
  EXPECT_EQ(t.bound, Bound::Overhead);
}

TEST(LibraryChoiceTest, BothPathsFromTheSpec) {
  // kSpec (1 GFLOP/s, 1 us per call) with oneDNN at half the peak and 10 us
  // more per call, our tiled code at a quarter, scalar loops at 1%, our
  // loops at half the bandwidth.
  llvm::Expected<DeviceSpec> spec = parseDeviceSpec(
      edited("\"call_overhead_s\": 1e-6,",
             "\"call_overhead_s\": 1e-6, \"onednn\": {\"f32_efficiency\": "
             "0.5, \"call_overhead_s\": 1e-5}, \"codegen\": "
             "{\"tiled_f32_efficiency\": 0.25, \"scalar_f32_efficiency\": "
             "0.01, \"memory_efficiency\": 0.5},"),
      "lib.json");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  ContractionCost cost;
  // 1e4 FLOPs, 2e3 bytes (DRAM: 2 us): oneDNN 1 + 10 + 20 us; tiled 1 + 40
  // us; scalar 1 + 1000 us.
  cost.flops = 1e4;
  cost.bytes = 2e3;
  cost.tiled = true;
  std::optional<PathEstimate> t = estimatePaths(cost, *spec);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(t->librarySeconds, 31e-6, 1e-12);
  EXPECT_NEAR(t->codegenSeconds, 41e-6, 1e-12);
  EXPECT_TRUE(t->libraryIsFaster());
  cost.tiled = false;
  EXPECT_NEAR(estimatePaths(cost, *spec)->codegenSeconds, 1001e-6, 1e-12);
  // Reorders: 5e3 bytes read and written = 1e4 bytes at 1 GB/s = 10 us.
  cost.reorderBytes = 5e3;
  EXPECT_NEAR(estimatePaths(cost, *spec)->librarySeconds, 41e-6, 1e-12);
  // A tiny op: 100 FLOPs, 400 bytes (cache: 40 ns). oneDNN 11.2 us, ours
  // 1.4 us.
  ContractionCost tiny{100, 400, 0, true};
  EXPECT_FALSE(estimatePaths(tiny, *spec)->libraryIsFaster());
  // Memory-bound: 1e3 FLOPs, 1e5 bytes = 100 us at DRAM bandwidth, which
  // our loops reach at half: oneDNN 1 + 10 + 100 us, ours 1 + 200 us.
  ContractionCost thin{1e3, 1e5, 0, true};
  EXPECT_NEAR(estimatePaths(thin, *spec)->librarySeconds, 111e-6, 1e-12);
  EXPECT_NEAR(estimatePaths(thin, *spec)->codegenSeconds, 201e-6, 1e-12);
  // A transposed operand our loops read from a copy: 5e4 bytes read and
  // written = 1e5 bytes at 1 GB/s = 100 us more for our code only.
  thin.copyBytes = 5e4;
  EXPECT_NEAR(estimatePaths(thin, *spec)->librarySeconds, 111e-6, 1e-12);
  EXPECT_NEAR(estimatePaths(thin, *spec)->codegenSeconds, 301e-6, 1e-12);
  // Without "onednn" there is no library path to compare.
  EXPECT_FALSE(estimatePaths(cost, testSpec()).has_value());
  // Serialized and read back unchanged.
  llvm::Expected<DeviceSpec> again =
      parseDeviceSpec(serializeDeviceSpec(*spec), "again");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_DOUBLE_EQ(again->onednn->callOverheadS, 1e-5);
  EXPECT_DOUBLE_EQ(again->codegen->scalarF32Efficiency, 0.01);
}

TEST(LibraryChoiceTest, BF16EfficiencyScalesTheBF16Peak) {
  // kSpec's bf16 peak is 2 GFLOP/s; oneDNN reaches half the f32 peak and a
  // quarter of the bf16 one.
  std::string onednn = "\"call_overhead_s\": 1e-6, \"onednn\": "
                       "{\"f32_efficiency\": 0.5, \"bf16_efficiency\": 0.25, "
                       "\"call_overhead_s\": 1e-5}, \"codegen\": "
                       "{\"tiled_f32_efficiency\": 0.25, "
                       "\"scalar_f32_efficiency\": 0.01, "
                       "\"memory_efficiency\": 0.5},";
  llvm::Expected<DeviceSpec> spec =
      parseDeviceSpec(edited("\"call_overhead_s\": 1e-6,", onednn), "b.json");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  // 1e4 FLOPs, 2e3 bytes (DRAM: 2 us): bf16 inputs 1 + 10 + 1e4 / (2e9 x
  // 0.25) = 31 us; f32 inputs 1 + 10 + 1e4 / (1e9 x 0.5) = 31 us.
  ContractionCost cost{1e4, 2e3, 0, true};
  EXPECT_NEAR(estimatePaths(cost, *spec)->librarySeconds, 31e-6, 1e-12);
  cost.inputType = SpecDType::BF16;
  EXPECT_NEAR(estimatePaths(cost, *spec)->librarySeconds, 31e-6, 1e-12);
  // Without bf16_efficiency, the f32 one scales the bf16 peak: 1 + 10 + 10.
  llvm::Expected<DeviceSpec> plain = parseDeviceSpec(
      edited("\"call_overhead_s\": 1e-6,",
             "\"call_overhead_s\": 1e-6, \"onednn\": {\"f32_efficiency\": "
             "0.5, \"call_overhead_s\": 1e-5}, \"codegen\": "
             "{\"tiled_f32_efficiency\": 0.25, \"scalar_f32_efficiency\": "
             "0.01, \"memory_efficiency\": 0.5},"),
      "p.json");
  ASSERT_TRUE(bool(plain)) << llvm::toString(plain.takeError());
  EXPECT_NEAR(estimatePaths(cost, *plain)->librarySeconds, 21e-6, 1e-12);
  // Serialized and read back: present stays present, absent absent.
  llvm::Expected<DeviceSpec> again =
      parseDeviceSpec(serializeDeviceSpec(*spec), "again");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->onednn->bf16Efficiency, std::optional<double>(0.25));
  llvm::Expected<DeviceSpec> plainAgain =
      parseDeviceSpec(serializeDeviceSpec(*plain), "again");
  ASSERT_TRUE(bool(plainAgain)) << llvm::toString(plainAgain.takeError());
  EXPECT_FALSE(plainAgain->onednn->bf16Efficiency.has_value());
  // Out of range.
  std::string bad = onednn;
  bad.replace(bad.find("0.25"), 4, "1.5");
  EXPECT_EQ(parseError(edited("\"call_overhead_s\": 1e-6,", bad)),
            "bad.json: $.onednn.bf16_efficiency: expected a number in (0, 1] "
            "(a fraction of a peak), got 1.5");
}

TEST(LibraryChoiceTest, BadFields) {
  EXPECT_EQ(parseError(edited(
                "\"call_overhead_s\": 1e-6,",
                "\"call_overhead_s\": 1e-6, \"onednn\": "
                "{\"f32_efficiency\": 0, \"call_overhead_s\": 0}, "
                "\"codegen\": {\"tiled_f32_efficiency\": 0.5, "
                "\"scalar_f32_efficiency\": 0.1, \"memory_efficiency\": 1},")),
            "bad.json: $.onednn.f32_efficiency: expected a number in (0, 1] "
            "(a fraction of a peak), got 0");
  EXPECT_EQ(parseError(edited(
                "\"call_overhead_s\": 1e-6,",
                "\"call_overhead_s\": 1e-6, \"codegen\": "
                "{\"tiled_f32_efficiency\": \"high\", "
                "\"scalar_f32_efficiency\": 0.1, \"memory_efficiency\": 1},")),
            "bad.json: $.codegen.tiled_f32_efficiency: expected a number in "
            "(0, 1] (a fraction of a peak), got string");
  EXPECT_EQ(parseError(edited("\"call_overhead_s\": 1e-6,",
                              "\"call_overhead_s\": 1e-6, \"codegen\": "
                              "{\"tiled_f32_efficiency\": 0.5},")),
            "bad.json: $.codegen: missing required field "
            "\"scalar_f32_efficiency\"");
  EXPECT_EQ(
      parseError(edited(
          "\"call_overhead_s\": 1e-6,",
          "\"call_overhead_s\": 1e-6, \"onednn\": "
          "{\"f32_efficiency\": 0.5, \"call_overhead_s\": "
          "-1}, \"codegen\": {\"tiled_f32_efficiency\": "
          "0.5, \"scalar_f32_efficiency\": 0.1, \"memory_efficiency\": 1},")),
      "bad.json: $.onednn.call_overhead_s: expected a number >= 0, got "
      "-1");
}

TEST(AlphaBetaTest, RingCollectives) {
  DeviceSpec spec = testSpec();
  // n = 4, 1 MB, alpha 1 us, beta 1 GB/s:
  // all-reduce: 2 * 3 * 1 us + 2 * 3/4 * 1e6 / 1e9 s = 6 us + 1.5 ms.
  EXPECT_DOUBLE_EQ(*estimateCollective(Collective::AllReduce, 4, 1e6, spec),
                   6e-6 + 1.5e-3);
  // all-gather, reduce-scatter, all-to-all: 3 us + 0.75 ms.
  for (Collective kind :
       {Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll})
    EXPECT_DOUBLE_EQ(*estimateCollective(kind, 4, 1e6, spec), 3e-6 + 7.5e-4)
        << stringifyCollective(kind).str();
  // n = 2, 8 bytes: 1 us + 1/2 * 8 ns = 1.004 us.
  EXPECT_DOUBLE_EQ(*estimateCollective(Collective::AllGather, 2, 8, spec),
                   1e-6 + 4e-9);
  EXPECT_EQ(*estimateCollective(Collective::AllReduce, 1, 1e6, spec), 0);
  spec.link = {};
  EXPECT_FALSE(estimateCollective(Collective::AllReduce, 4, 1e6, spec));
}

class OpCostTest : public ::testing::Test {
protected:
  OpCostTest() { context.loadDialect<PaddleDialect, func::FuncDialect>(); }

  /// The ops of the first function of `source`, in order, minus return.
  SmallVector<Operation *> parse(const char *source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(bool(module));
    SmallVector<Operation *> ops;
    module->walk([&](Operation *op) {
      if (hasCostModel(op))
        ops.push_back(op);
    });
    return ops;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(OpCostTest, MatmulAndDynamicDims) {
  auto ops = parse(R"mlir(
    func.func @f(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>,
                 %c: tensor<?x16xf32>) -> (tensor<8x4xf32>, tensor<?x4xf32>) {
      %0 = paddle.matmul %a, %b : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
      %1 = paddle.matmul %c, %b : tensor<?x16xf32>, tensor<16x4xf32> -> tensor<?x4xf32>
      return %0, %1 : tensor<8x4xf32>, tensor<?x4xf32>
    })mlir");
  ASSERT_EQ(ops.size(), 2u);
  // 2 * 8 * 4 * 16 = 1024 FLOPs; (128 + 64 + 32) * 4 = 896 bytes.
  OpCost mm = estimateOp(ops[0]);
  EXPECT_EQ(mm.flops, 1024);
  EXPECT_EQ(mm.bytes, 896);
  OpCost dyn = estimateOp(ops[1]);
  EXPECT_FALSE(dyn.known);
  EXPECT_EQ(dyn.reason, "tensor<?x16xf32> has a dynamic dim and no size hint "
                        "was given (dynamic-dim-size=N)");
  // With ? = 2: 2 * 2 * 4 * 16 = 256 FLOPs; (32 + 64 + 8) * 4 = 416 bytes.
  OpCost hinted = estimateOp(ops[1], CostOptions{2});
  EXPECT_EQ(hinted.flops, 256);
  EXPECT_EQ(hinted.bytes, 416);
}

TEST_F(OpCostTest, GroupCountsOnlyBoundaryBytes) {
  auto ops = parse(R"mlir(
    func.func @f(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<256xf32> {
      %0 = paddle.add %x, %y : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
      %1 = paddle.exp %0 : tensor<256xf32> -> tensor<256xf32>
      %2 = paddle.mul %1, %x : tensor<256xf32>, tensor<256xf32> -> tensor<256xf32>
      return %2 : tensor<256xf32>
    })mlir");
  ASSERT_EQ(ops.size(), 3u);
  // Alone: add 256 + exp 2560 + mul 256 FLOPs; 3 + 2 + 3 buffers of 1 KiB.
  double flops = 0, bytes = 0;
  for (Operation *op : ops) {
    OpCost c = estimateOp(op);
    flops += c.flops;
    bytes += c.bytes;
  }
  EXPECT_EQ(flops, 3072);
  EXPECT_EQ(bytes, 8 * 1024);
  // Fused: the same FLOPs, and only %x, %y in and %2 out: 3 KiB (%x once).
  OpCost group = estimateGroup(ops);
  EXPECT_EQ(group.flops, 3072);
  EXPECT_EQ(group.bytes, 3 * 1024);
  EXPECT_TRUE(group.isKernel);
  // A group of the first two: %x, %y in; %0 is used outside? No: only by
  // exp. %1 is used by mul (outside): 2 KiB in, 1 KiB out.
  OpCost pair = estimateGroup({ops[0], ops[1]});
  EXPECT_EQ(pair.bytes, 3 * 1024);
  EXPECT_EQ(pair.flops, 256 + 2560);
}

} // namespace
