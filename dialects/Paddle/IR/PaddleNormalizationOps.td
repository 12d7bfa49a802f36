//===- PaddleNormalizationOps.td ------------------------------*- tablegen -*-===//

#ifndef PADDLE_NORMALIZATION_OPS_TD
#define PADDLE_NORMALIZATION_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"

#endif
