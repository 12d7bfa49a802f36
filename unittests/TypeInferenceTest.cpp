//===- TypeInferenceTest.cpp - shared result-type inference ---------------===//

#include "dialects/Paddle/IR/TypeInference.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::paddle;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

TEST(Broadcast, NumpyRules) {
  auto r = broadcastShapes(std::nullopt, {4, 1, 3}, {5, 1});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, (SmallVector<int64_t>{4, 5, 3}));
  r = broadcastShapes(std::nullopt, {}, {2, 2});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, (SmallVector<int64_t>{2, 2}));
  EXPECT_TRUE(failed(broadcastShapes(std::nullopt, {3}, {4})));
}

TEST(Broadcast, DynamicDims) {
  // ? vs 1 stays ?, ? vs 5 is 5, ? vs ? is ?.
  auto r = broadcastShapes(std::nullopt, {kDyn, kDyn, kDyn}, {1, 5, kDyn});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, (SmallVector<int64_t>{kDyn, 5, kDyn}));
}

TEST(Broadcast, ErrorNamesTheDims) {
  MLIRContext ctx;
  std::string message;
  ctx.getDiagEngine().registerHandler([&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  auto r = broadcastShapes(UnknownLoc::get(&ctx), {2, 3}, {4, 3});
  EXPECT_TRUE(failed(r));
  EXPECT_EQ(message,
            "shapes [2, 3] and [4, 3] do not broadcast: dim 0 is 2 vs 4");
}

TEST(Axes, Normalize) {
  auto a = normalizeAxes(std::nullopt, ArrayRef<int64_t>{-1, 0}, 3);
  ASSERT_TRUE(succeeded(a));
  EXPECT_EQ(*a, (SmallVector<int64_t>{0, 2}));
  EXPECT_TRUE(failed(normalizeAxes(std::nullopt, ArrayRef<int64_t>{1, -2}, 3)));
  EXPECT_TRUE(failed(normalizeAxis(std::nullopt, 3, 3)));
  auto all = normalizeAxes(std::nullopt, std::nullopt, 2);
  ASSERT_TRUE(succeeded(all));
  EXPECT_EQ(all->size(), 2u);
}

TEST(Compatible, StaticAndDynamic) {
  MLIRContext ctx;
  auto f32 = Float32Type::get(&ctx);
  Type a = RankedTensorType::get({4, kDyn}, f32);
  Type b = RankedTensorType::get({4, 7}, f32);
  Type c = RankedTensorType::get({5, 7}, f32);
  EXPECT_TRUE(areCompatibleReturnTypes(a, b));
  EXPECT_FALSE(areCompatibleReturnTypes(b, c));
  EXPECT_FALSE(areCompatibleReturnTypes(
      a, RankedTensorType::get({4, kDyn}, Float64Type::get(&ctx))));
}

} // namespace
