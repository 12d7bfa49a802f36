// RUN: paddle-opt %s --split-input-file --paddle-inline-parts --verify-diagnostics

// paddle-split-functions calls each part once: a second call is an error,
// not a second copy of its ops.
// expected-error @+1 {{'func.func' op is not a part paddle-inline-parts can inline}}
func.func private @f_part(%x: memref<4xf32>) attributes {paddle.part} {
  return
}
func.func @f(%x: memref<4xf32>) {
  call @f_part(%x) : (memref<4xf32>) -> ()
  call @f_part(%x) : (memref<4xf32>) -> ()
  return
}

// -----

// expected-error @+1 {{'func.func' op is not a part paddle-inline-parts can inline}}
func.func private @g_part(%x: memref<4xf32>) attributes {paddle.part} {
  cf.br ^bb1
^bb1:
  return
}
func.func @g(%x: memref<4xf32>) {
  call @g_part(%x) : (memref<4xf32>) -> ()
  return
}
