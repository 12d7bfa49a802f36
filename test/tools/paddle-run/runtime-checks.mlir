// Sizes and indices only the run knows are checked before they reach an
// allocation, a loop bound or a load: a failed check is an error naming the
// op and its location, never a crash or uninitialized memory.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; s = lambda n, v: np.save('%t/' + n + '.npy', v); s('m5', np.array(-5, np.int64)); s('big', np.array(2**62, np.int64)); s('three', np.array(3, np.int64)); s('x41', np.ones((4, 1), np.int8)); s('x22', np.ones((1, 1, 2, 2), np.float32)); s('x55', np.ones((1, 1, 5, 5), np.float32)); s('e03', np.zeros((0, 3), np.float32)); s('v5', np.arange(5, dtype=np.float32)); s('iok', np.array([-5, 4, 0], np.int64)); s('ibad', np.array([0, 5], np.int64)); s('ineg', np.array([-6], np.int32)); s('u2', np.ones(2, np.float32)); s('u1', np.ones(1, np.float32))"

// RUN: paddle-run %s --function iota --input %t/three.npy | FileCheck %s --check-prefix=IOTA-OK
// IOTA-OK: result 0: i64 [3] = {0, 1, 2}
// RUN: not paddle-run %s --function iota --input %t/m5.npy 2>&1 | FileCheck %s --check-prefix=IOTA-NEG
// IOTA-NEG: paddle-run: error: iota: {{.*}}runtime-checks.mlir:[[# @LINE + 9]]:8: paddle.iota: dim 0 of tensor<?xi64> has a negative size
// RUN: not paddle-run %s --function iota --input %t/big.npy 2>&1 | FileCheck %s --check-prefix=IOTA-BIG
// IOTA-BIG: paddle-run: error: iota: {{.*}}runtime-checks.mlir:[[# @LINE + 7]]:8: paddle.iota: the sizes of tensor<?xi64> make more than 2^63 - 1 bytes
// RUN: not paddle-run %s --function rng --input %t/three.npy --input %t/big.npy 2>&1 | FileCheck %s --check-prefix=RNG-BIG
// RNG-BIG: paddle-run: error: rng: {{.*}}runtime-checks.mlir:[[# @LINE + 12]]:8: paddle.rng_uniform: the sizes of tensor<?xf32> make more than 2^63 - 1 bytes

func.func @iota(%n: tensor<i64>) -> tensor<?xi64> {
  %c = tensor.extract %n[] : tensor<i64>
  %i = arith.index_cast %c : i64 to index
  %0 = paddle.iota [%i] dim = 0 : tensor<?xi64>
  return %0 : tensor<?xi64>
}

func.func @rng(%seed: tensor<i64>, %n: tensor<i64>) -> tensor<?xf32> {
  %c = tensor.extract %n[] : tensor<i64>
  %i = arith.index_cast %c : i64 to index
  %0 = paddle.rng_uniform %seed [%i] : tensor<i64> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// A 4 x 1 input broadcast to [-1, 2^62]: 2^64 bytes would wrap to 0.
// RUN: not paddle-run %s --function broadcast --input %t/x41.npy 2>&1 | FileCheck %s --check-prefix=BROADCAST
// BROADCAST: paddle-run: error: broadcast: {{.*}}runtime-checks.mlir:[[# @LINE + 2]]:8: paddle.broadcast_to: the sizes of tensor<?x4611686018427387904xi8> make more than 2^63 - 1 bytes
func.func @broadcast(%x: tensor<?x1xi8>) -> tensor<?x4611686018427387904xi8> {
  %0 = paddle.broadcast_to %x shape = [-1, 4611686018427387904] : tensor<?x1xi8> -> tensor<?x4611686018427387904xi8>
  return %0 : tensor<?x4611686018427387904xi8>
}

// An input smaller than the kernel would give [1, 1, -2, -2].
// RUN: paddle-run %s --function conv --input %t/x55.npy | FileCheck %s --check-prefix=CONV-OK
// CONV-OK: result 0: f32 [1, 1, 3, 3] = {9.000000e+00,
// RUN: not paddle-run %s --function conv --input %t/x22.npy 2>&1 | FileCheck %s --check-prefix=CONV
// CONV: paddle-run: error: conv: {{.*}}runtime-checks.mlir:[[# @LINE + 3]]:8: paddle.conv2d: the padded input is smaller than the dilated kernel
func.func @conv(%x: tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xf32> {
  %w = paddle.constant dense<1.0> : tensor<1x1x3x3xf32>
  %0 = paddle.conv2d %x, %w : tensor<1x1x?x?xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x?x?xf32>
  return %0 : tensor<1x1x?x?xf32>
}

// max and argmax of nothing (numpy raises); sum of nothing is 0.
// RUN: not paddle-run %s --function reductions --input %t/e03.npy 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: paddle-run: error: reductions: {{.*}}runtime-checks.mlir:[[# @LINE + 6]]:8: paddle.reduce_max: reduces dim 0 of size 0, which has no maximum (numpy raises)
// RUN: not paddle-run %s --function argmax --input %t/e03.npy 2>&1 | FileCheck %s --check-prefix=ARGMAX
// ARGMAX: paddle-run: error: argmax: {{.*}}runtime-checks.mlir:[[# @LINE + 8]]:8: paddle.argmax: reduces dim 0 of size 0, which has no largest element (numpy raises)
// RUN: paddle-run %s --function sum --input %t/e03.npy | FileCheck %s --check-prefix=SUM
// SUM: result 0: f32 [3] = {0.000000e+00, 0.000000e+00, 0.000000e+00}
func.func @reductions(%x: tensor<?x3xf32>) -> tensor<3xf32> {
  %0 = paddle.reduce_max %x axes = [0] : tensor<?x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @argmax(%x: tensor<?x3xf32>) -> tensor<3xi64> {
  %0 = paddle.argmax %x axis = 0 : tensor<?x3xf32> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}
func.func @sum(%x: tensor<?x3xf32>) -> tensor<3xf32> {
  %0 = paddle.reduce_sum %x axes = [0] : tensor<?x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// Indices in [-n, n) count from either end; others are an error, not a
// clamped or skipped index.
// RUN: paddle-run %s --function gather --input %t/v5.npy --input %t/iok.npy | FileCheck %s --check-prefix=GATHER-OK
// GATHER-OK: result 0: f32 [3] = {0.000000e+00, 4.000000e+00, 0.000000e+00}
// RUN: not paddle-run %s --function gather --input %t/v5.npy --input %t/ibad.npy 2>&1 | FileCheck %s --check-prefix=GATHER
// GATHER: paddle-run: error: gather: {{.*}}runtime-checks.mlir:[[# @LINE + 4]]:8: paddle.gather: an index is out of range for dim 0 of x (size 5): valid indices are -size to size - 1
// RUN: not paddle-run %s --function scatter --input %t/v5.npy --input %t/ineg.npy --input %t/u1.npy 2>&1 | FileCheck %s --check-prefix=SCATTER
// SCATTER: paddle-run: error: scatter: {{.*}}runtime-checks.mlir:[[# @LINE + 6]]:8: paddle.scatter_add: an index is out of range for dim 0 of x (size 5): valid indices are -size to size - 1
func.func @gather(%x: tensor<5xf32>, %i: tensor<?xi64>) -> tensor<?xf32> {
  %0 = paddle.gather %x, %i axis = 0 : tensor<5xf32>, tensor<?xi64> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @scatter(%x: tensor<5xf32>, %i: tensor<?xi32>, %u: tensor<?xf32>) -> tensor<5xf32> {
  %0 = paddle.scatter_add %x, %i, %u axis = 0 : tensor<5xf32>, tensor<?xi32>, tensor<?xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// A splat of 10^11 elements is filled at run time: too large for memory, an
// ordinary out-of-memory error (it aborted the JIT while LLVM expanded it).
// RUN: not paddle-run %s --function splat --memory-limit 16M 2>&1 | FileCheck %s --check-prefix=SPLAT
// SPLAT: paddle-run: error: splat: out of memory
func.func @splat() -> tensor<100000000000xf32> {
  %0 = paddle.constant dense<1.0> : tensor<100000000000xf32>
  return %0 : tensor<100000000000xf32>
}
