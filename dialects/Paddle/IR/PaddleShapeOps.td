//===- PaddleShapeOps.td ---------------------------------------*- tablegen -*-===//

#ifndef PADDLE_SHAPE_OPS_TD
#define PADDLE_SHAPE_OPS_TD

include "dialects/Paddle/IR/PaddleBase.td"

#endif
