// RUN: paddle-opt %s --paddle-set-target="device=h200" --paddle-sharding-report="json=%t.json" -o %t.mlir | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json

// The sharding report of a function the cost model plans
// (paddle.auto_shard): the plan's prediction, and each collective the plan
// inserts named with the source line of the op that needs it. A loss
// summed over 64 Mi elements on 8 H200: computed whole on every device it
// reads 512 MiB (112 us); split by rows, each device reads an eighth. The
// row sums (256 KiB) are then gathered for the last sum, one step of 14.5
// us, where an all-reduce of the partial scalar would take two (29 us).

shard.grid @mesh(shape = 8)

// CHECK: func @loss on mesh [8]
// CHECK-NEXT: auto-sharded plan: predicted {{[0-9.]+}} us, peak memory {{[0-9]+}} B per device
// CHECK-NEXT: CBC 2.10.{{[0-9]+}} optimal in {{[0-9.]+}} s: 5 nodes, {{[0-9]+}} strategies, {{[0-9]+}} edges; priced on h200
// Each op that communicates, and the cheapest strategy it did not take:
// CHECK-NEXT: paddle.reduce_sum at model.py:13:9: collectives 14.510 us with operand 0 {{\[\[0\], \[\]\]}}, result 0 {{\[\[0\]\]}}
// CHECK-NEXT: rather than operand 0 {{\[\[\], \[0\]\]}}, result 0 {{\[\[\]\]}}: time: 550.475 us more
// CHECK-NEXT: paddle.reduce_sum at model.py:14:9: collectives 14.510 us with operand 0 {{\[\[\]\]}}
// CHECK-NEXT: rather than operand 0 {{\[\[0\]\]}}: time: 13.483 us more
// CHECK-NEXT: argument 0 tensor<65536x1024xf32> split {{\[\[0\], \[\]\]}} per device tensor<8192x1024xf32>
// CHECK-NEXT: argument 1 tensor<65536x1024xf32> split {{\[\[0\], \[\]\]}} per device tensor<8192x1024xf32>
// CHECK: 1 collective:
// CHECK-NEXT: all_gather axes [0] 262144 B model.py:14:9 14.510 us
// JSON: "plan": {
// JSON: "decisions": [
// JSON: "rejected_for": "time: 550.475 us more"
// JSON: "solver": "CBC 2.10.
// JSON: "status": "optimal"
func.func @loss(%x: tensor<65536x1024xf32>, %y: tensor<65536x1024xf32>) -> tensor<f32> attributes {paddle.auto_shard} {
  %p = paddle.mul %x, %y : tensor<65536x1024xf32>, tensor<65536x1024xf32> -> tensor<65536x1024xf32> loc("model.py":12:9)
  %r = paddle.reduce_sum %p axes = [1] : tensor<65536x1024xf32> -> tensor<65536xf32> loc("model.py":13:9)
  %s = paddle.reduce_sum %r axes = [0] : tensor<65536xf32> -> tensor<f32> loc("model.py":14:9)
  return %s : tensor<f32>
}
