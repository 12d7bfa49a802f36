// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(6, dtype=np.float32).reshape(2, 3))"
// RUN: paddle-run %s --input %t/x.npy --bench 5 --output-dir %t/out | FileCheck %s
// RUN: %python -c "import numpy as np; r = np.load('%t/out/main_0.npy'); assert r.shape == (2, 3) and (r == np.arange(6).reshape(2, 3) * 2).all(), r"
// CHECK: bench main: 5 runs, median {{[0-9.]+}} ms, min {{[0-9.]+}} ms
func.func @main(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = paddle.add %x, %x : tensor<2x?xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}
