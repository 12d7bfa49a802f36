//===- PaddleOps.td - paddle dialect ops ---------------------*- tablegen -*-===//
//
// All ops of the dialect, one file per category.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_OPS_TD
#define PADDLE_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"
include "dialects/Paddle/IR/PaddleTarget.td"
include "dialects/Paddle/IR/PaddleElementwiseOps.td"
include "dialects/Paddle/IR/PaddleShapeOps.td"
include "dialects/Paddle/IR/PaddleReductionOps.td"
include "dialects/Paddle/IR/PaddleNNOps.td"
include "dialects/Paddle/IR/PaddleNormalizationOps.td"
include "dialects/Paddle/IR/PaddleFusionOps.td"

#endif // PADDLE_OPS_TD
