// RUN: paddle-opt %s --split-input-file --verify-diagnostics

// A valid target parses (and the spec's integers and floats may be written
// either way).
module attributes {paddle.target = #paddle.target<device = "tiny", vector_bits = 256, library = auto, precision = f32, spec = {name = "tiny", kind = "cpu", cores = 1 : i64, peak_flops_per_s = {f32 = 1.0e9 : f64}, memory_bandwidth_bytes_per_s = 1.0e9 : f64, call_overhead_s = 1 : i64}>} {
}

// -----

// expected-error @+1 {{vector_bits must be 128, 256 or 512; got 100}}
module attributes {paddle.target = #paddle.target<device = "tiny", vector_bits = 100, library = auto, precision = f32, spec = {name = "tiny", kind = "cpu", cores = 1 : i64, peak_flops_per_s = {f32 = 1.0e9 : f64}, memory_bandwidth_bytes_per_s = 1.0e9 : f64, call_overhead_s = 0.0 : f64}>} {
}

// -----

// expected-error @+1 {{#paddle.target spec: $: missing required field "cores"}}
module attributes {paddle.target = #paddle.target<device = "tiny", vector_bits = 256, library = auto, precision = f32, spec = {name = "tiny", kind = "cpu", peak_flops_per_s = {f32 = 1.0e9 : f64}, memory_bandwidth_bytes_per_s = 1.0e9 : f64, call_overhead_s = 0.0 : f64}>} {
}

// -----

// expected-error @+1 {{device "big" differs from the spec's name "tiny"}}
module attributes {paddle.target = #paddle.target<device = "big", vector_bits = 256, library = auto, precision = f32, spec = {name = "tiny", kind = "cpu", cores = 1 : i64, peak_flops_per_s = {f32 = 1.0e9 : f64}, memory_bandwidth_bytes_per_s = 1.0e9 : f64, call_overhead_s = 0.0 : f64}>} {
}

// -----

// expected-error @+1 {{$.cores: expected a dictionary, array, string, integer or float attribute}}
module attributes {paddle.target = #paddle.target<device = "tiny", vector_bits = 256, library = auto, precision = f32, spec = {name = "tiny", kind = "cpu", cores = unit, peak_flops_per_s = {f32 = 1.0e9 : f64}, memory_bandwidth_bytes_per_s = 1.0e9 : f64, call_overhead_s = 0.0 : f64}>} {
}

// -----

// expected-error @+1 {{$.cores: integer does not fit in 64 bits}}
module attributes {paddle.target = #paddle.target<device = "tiny", vector_bits = 256, library = auto, precision = f32, spec = {name = "tiny", kind = "cpu", cores = 99999999999999999999999 : i128, peak_flops_per_s = {f32 = 1.0e9 : f64}, memory_bandwidth_bytes_per_s = 1.0e9 : f64, call_overhead_s = 0.0 : f64}>} {
}

// -----

// expected-error @+2 {{expected ::mlir::paddle::LibraryChoice to be one of: auto, onednn, none}}
// expected-error @+1 {{failed to parse Paddle_TargetAttr parameter 'library'}}
module attributes {paddle.target = #paddle.target<device = "tiny", vector_bits = 256, library = mkl, precision = f32, spec = {}>} {
}

// -----

// expected-error @+1 {{'paddle.target' must be a #paddle.target, got "h200"}}
module attributes {paddle.target = "h200"} {
}

// -----

module {
  // expected-error @+1 {{'paddle.target' belongs on a module, not on 'func.func'}}
  func.func @f() attributes {paddle.target = #paddle.target<device = "tiny", vector_bits = 256, library = auto, precision = f32, spec = {name = "tiny", kind = "cpu", cores = 1 : i64, peak_flops_per_s = {f32 = 1.0e9 : f64}, memory_bandwidth_bytes_per_s = 1.0e9 : f64, call_overhead_s = 0.0 : f64}>} {
    return
  }
}

// -----

// The other declared attributes (discardableAttrs in PaddleBase.td) are
// checked too, and a paddle.* name that is not declared is an error.

// expected-error @+1 {{unknown attribute 'paddle.no_such_marker' (the paddle.* attributes are declared in PaddleBase.td)}}
module attributes {paddle.no_such_marker} {
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'paddle.zero_pad' must be an array<i64>, got 1 : i64}}
  %0 = paddle.add %a, %a {paddle.zero_pad = 1 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'paddle.aliasing_output' must be an i64 result index, got 0 : i32}}
func.func @f(%a: tensor<4xf32> {paddle.aliasing_output = 0 : i32}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'paddle.aliasing_output' belongs on a function argument}}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> attributes {paddle.aliasing_output = 0 : i64} {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'paddle.part' belongs on an operation}}
func.func @f(%a: tensor<4xf32> {paddle.part}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
