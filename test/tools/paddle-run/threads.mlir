// --threads N sets the runtime's thread count; a bad count is a message and
// exit code 1. PADDLE_NUM_THREADS that is not a count is ignored with a
// warning.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(6, dtype=np.float32))"

// RUN: paddle-run %s --threads 2 --input %t/x.npy | FileCheck %s --check-prefix=OK
// RUN: paddle-run %s --threads=1 --input %t/x.npy | FileCheck %s --check-prefix=OK
// RUN: env PADDLE_NUM_THREADS=3 paddle-run %s --input %t/x.npy | FileCheck %s --check-prefix=OK
// OK: result 0: f32 [6] = {0.000000e+00, 2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00, 1.000000e+01}

// RUN: not paddle-run %s --threads 0 --input %t/x.npy 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: paddle-run: error: --threads expects a count from 1 to 4096, got '0'

// RUN: not paddle-run %s --threads two --input %t/x.npy 2>&1 | FileCheck %s --check-prefix=WORD
// WORD: paddle-run: error: --threads expects a count from 1 to 4096, got 'two'

// RUN: not paddle-run %s --threads 100000 --input %t/x.npy 2>&1 | FileCheck %s --check-prefix=MANY
// MANY: paddle-run: error: --threads expects a count from 1 to 4096, got '100000'

// RUN: not paddle-run %s --input %t/x.npy --threads 2>&1 | FileCheck %s --check-prefix=NOVALUE
// NOVALUE: paddle-run: error: --threads expects a value

// RUN: env PADDLE_NUM_THREADS=lots paddle-run %s --input %t/x.npy 2>&1 | FileCheck %s --check-prefix=ENV
// ENV: paddle: ignoring PADDLE_NUM_THREADS='lots' (expected an integer from 1 to 4096)
// ENV: result 0: f32 [6]
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = paddle.add %x, %x : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
