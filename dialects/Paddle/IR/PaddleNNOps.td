//===- PaddleNNOps.td ---------------------------------------*- tablegen -*-===//

#ifndef PADDLE_NN_OPS_TD
#define PADDLE_NN_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"

#endif
