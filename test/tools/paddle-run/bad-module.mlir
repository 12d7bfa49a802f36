// RUN: not paddle-run %s 2>&1 | FileCheck %s
// RUN: not paddle-run %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: echo "func.func @f() {" > %t.truncated.mlir
// RUN: not paddle-run %t.truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNCATED

// CHECK: bad-module.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: shapes [4] and [3] do not broadcast
// CHECK: paddle-run: error: cannot parse
func.func @main(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  %0 = paddle.add %a, %b : tensor<4xf32>, tensor<3xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// NOFILE: paddle-run: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
// TRUNCATED: error: expected
// TRUNCATED: paddle-run: error: cannot parse
