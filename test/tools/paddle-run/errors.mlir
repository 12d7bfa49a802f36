// Every user error of paddle-run is a message and exit code 1, never a crash.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/v3.npy', np.ones(3, np.float32)); np.save('%t/v4.npy', np.ones(4, np.float32)); np.save('%t/i3.npy', np.ones(3, np.int32)); np.save('%t/m.npy', np.ones((2, 3), np.float32)); open('%t/bad.npy', 'wb').write(b'not a numpy file')"

// RUN: paddle-run %s --function add --input %t/v3.npy --input %t/v3.npy | FileCheck %s --check-prefix=OK
// OK: result 0: f32 [3] = {2.000000e+00, 2.000000e+00, 2.000000e+00}

// RUN: not paddle-run %s --input %t/v3.npy 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: paddle-run: error: the module has several public functions (add, fixed); choose one with --function

// RUN: not paddle-run %s --function nope 2>&1 | FileCheck %s --check-prefix=MISSING-FN
// MISSING-FN: paddle-run: error: no public function 'nope' in the module (it has: add, fixed)

// RUN: not paddle-run %s --function add --input %t/v3.npy 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: paddle-run: error: function 'add' takes 2 inputs, 1 given with --input

// RUN: not paddle-run %s --function add --input %t/v3.npy --input %t/i3.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: paddle-run: error: add: input 1 has element type i32, expected f32

// RUN: not paddle-run %s --function fixed --input %t/m.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: paddle-run: error: fixed: input 0 has shape [2, 3], expected [3]

// RUN: not paddle-run %s --function add --input %t/v3.npy --input %t/v4.npy 2>&1 | FileCheck %s --check-prefix=RUNTIME
// RUNTIME: paddle-run: error: add: {{.*}}errors.mlir:[[# @LINE + 9]]:8: paddle.add: operand dim 0 does not match the broadcast size at run time

// RUN: not paddle-run %s --function add --input %t/bad.npy --input %t/v3.npy 2>&1 | FileCheck %s --check-prefix=BADNPY
// BADNPY: paddle-run: error: {{.*}}bad.npy: malformed .npy: missing the \x93NUMPY magic

// RUN: not paddle-run %s --function add --input %t/none.npy --input %t/v3.npy 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: paddle-run: error: cannot open '{{.*}}none.npy': No such file or directory

func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = paddle.add %a, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @fixed(%a: tensor<3xf32>) -> tensor<3xf32> {
  return %a : tensor<3xf32>
}

func.func private @helper(%a: tensor<3xf32>) -> tensor<3xf32> {
  return %a : tensor<3xf32>
}
