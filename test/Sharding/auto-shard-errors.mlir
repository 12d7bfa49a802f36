// RUN: not paddle-opt %s --paddle-auto-shard="cluster=h200-8x1 memory-limit=300KB" 2>&1 | FileCheck %s --check-prefix=MEM
// RUN: not paddle-opt %s --paddle-auto-shard="mesh=2y" 2>&1 | FileCheck %s --check-prefix=MESH
// RUN: not paddle-opt %s --paddle-auto-shard="mesh=2 memory-limit=lots" 2>&1 | FileCheck %s --check-prefix=LIMIT
// RUN: not paddle-opt %s --paddle-auto-shard="cluster=nowhere" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not paddle-opt %s --paddle-auto-shard 2>&1 | FileCheck %s --check-prefix=NOMESH
// RUN: not paddle-opt %s --paddle-auto-shard="mesh=4x4x4x4x4 cluster=h200-8x1" 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: echo '{"name": "c", "device": "h200", "nodes": 0}' > %t.json
// RUN: not paddle-opt %s --paddle-auto-shard="cluster=%t.json" 2>&1 | FileCheck %s --check-prefix=BADSPEC

// Bad options and a memory limit no plan meets. The weight alone is
// 4 MiB; split over 8 devices it is 512 KiB per device, more than the
// limit, and the smallest peak adds the per-device parts of the
// activations alive with it.

// MEM: error: paddle-auto-shard: no plan of @f fits in 300.00 KB per device on mesh 8; the smallest peak memory any plan reaches is 589.82 KB
// MESH: mesh='2y' is not a mesh shape (e.g. 8, 2x4)
// LIMIT: memory-limit='lots' is not a size (e.g. 16GB, 512MiB, 1e9)
// CLUSTER: unknown cluster 'nowhere': not a built-in spec (h200-8x1, h200-8x128, h200-8x16, h200-8x32, h200-8x8) nor a path to a .json file
// NOMESH: no mesh: give mesh=SHAPE (e.g. mesh=2x4), a cluster or a shard.grid in the module
// BIG: the mesh has 1024 devices; cluster 'h200-8x1' has 8
// BADSPEC: tmp.json: {{\$}}.nodes: expected an integer > 0, got 0
func.func @f(%x: tensor<64x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<64x1024xf32> {
  %h = paddle.matmul %x, %w : tensor<64x1024xf32>, tensor<1024x1024xf32> -> tensor<64x1024xf32>
  return %h : tensor<64x1024xf32>
}
