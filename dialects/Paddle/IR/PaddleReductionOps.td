//===- PaddleReductionOps.td ---------------------------------------*- tablegen -*-===//

#ifndef PADDLE_REDUCTION_OPS_TD
#define PADDLE_REDUCTION_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"

#endif
