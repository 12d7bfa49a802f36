// The smallest useful function: negate one float. Its run time is almost
// all call overhead, which benchmarks/call_overhead.py measures.
func.func @tiny(%x: tensor<1xf32>) -> tensor<1xf32> {
  %0 = paddle.neg %x : tensor<1xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
