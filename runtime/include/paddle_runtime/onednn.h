/*===- onednn.h - oneDNN kernels compiled code calls --------------*- C -*-===*
 *
 * `paddle-use-onednn` replaces large f32 matmuls (linalg.matmul,
 * linalg.batch_matmul, generic contractions), 2-D convolutions and max
 * poolings on buffers by
 *calls to these functions (through the symbol table, runtime/src/symbols.cpp).
 *They live in their own library, `paddle_runtime_onednn`, which links oneDNN
 *(libdnnl): the core runtime does not depend on it, and only artifacts whose
 *code calls these functions link it (docs/onednn.md).
 *
 * Arguments are MLIR strided memref descriptors (the callers are declared
 * with `llvm.emit_c_interface`). Each function computes the linalg op it
 * replaces: with `accumulate` != 0 the result is added to the output's
 * contents (linalg semantics, `C += A * B`); with 0 the output's contents are
 * ignored (the pass dropped the zero fill before it). Any strides are
 * accepted. A failure (oneDNN cannot build or run the primitive) ends the
 * call through paddle_runtime_fail with PADDLE_INTERNAL and oneDNN's status.
 *
 * Primitives are cached by problem (sizes, strides, parameters, thread
 * count); oneDNN uses paddle_get_num_threads() threads (its OpenMP runtime,
 * set per call), on the calling thread's OpenMP team.
 *
 *===----------------------------------------------------------------------===*/

#ifndef PADDLE_RUNTIME_ONEDNN_H
#define PADDLE_RUNTIME_ONEDNN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PADDLE_ONEDNN_MEMREF(rank, name, type)                                 \
  typedef struct paddle_memref##rank##d_##name {                               \
    type *allocated;                                                           \
    type *aligned;                                                             \
    int64_t offset;                                                            \
    int64_t sizes[rank];                                                       \
    int64_t strides[rank];                                                     \
  } paddle_memref##rank##d_##name##_t;
PADDLE_ONEDNN_MEMREF(4, f32, float)
PADDLE_ONEDNN_MEMREF(5, f32, float)
/* bf16 elements: the upper 16 bits of an f32. */
PADDLE_ONEDNN_MEMREF(4, bf16, uint16_t)
PADDLE_ONEDNN_MEMREF(5, bf16, uint16_t)
#undef PADDLE_ONEDNN_MEMREF

/* An MLIR unranked memref descriptor: `descriptor` points to a ranked one
 * (allocated, aligned, offset, sizes[rank], strides[rank]). */
typedef struct paddle_unranked_memref {
  int64_t rank;
  void *descriptor;
} paddle_unranked_memref_t;

/* Post-ops: every kernel runs its op, then a fused epilogue described by
 * `program`, a rank-1 i64 memref
 *   {flags, count, count x {kind, operand, alpha, beta}}
 * (alpha and beta are the bits of doubles; flags bit 0: the weights operand
 * is a constant, so its reordered form is cached, keyed by its address and
 * the call site's `state`, an i64 memref of one element that starts at 0 in
 * each loaded module; flags bit 1, convolutions only: Winograd is allowed,
 * so where oneDNN has a Winograd kernel for the problem and its post-ops,
 * the call uses it, else the direct one; flags bit 2: the depthwise post-op's
 * filter is a constant, cached like the weights under the state's second
 * word). `operand` indexes e0..e3, the extra
 * operands: per- channel vectors of C elements (any rank, one dim of C with
 * stride 1), C being the conv's output channels or the matmul's N. Unused extra
 * operands may be any memref. Kinds, applied in order to the result y: */
#define PADDLE_ONEDNN_POST_LINEAR 1    /* y = alpha * y + beta */
#define PADDLE_ONEDNN_POST_RELU 2      /* y = max(y, 0) */
#define PADDLE_ONEDNN_POST_CLIP 3      /* y = min(max(y, alpha), beta) */
#define PADDLE_ONEDNN_POST_TANH 4      /* y = tanh(y) */
#define PADDLE_ONEDNN_POST_SIGMOID 5   /* y = 1 / (1 + exp(-y)) */
#define PADDLE_ONEDNN_POST_GELU_ERF 6  /* y = y / 2 * (1 + erf(y / sqrt 2)) */
#define PADDLE_ONEDNN_POST_GELU_TANH 7 /* the tanh approximation */
#define PADDLE_ONEDNN_POST_BIAS 8      /* y += v[c] (first only) */
#define PADDLE_ONEDNN_POST_ADD 9       /* y += v[c] */
#define PADDLE_ONEDNN_POST_MUL 10      /* y *= v[c] */
#define PADDLE_ONEDNN_POST_SUB 11      /* y -= v[c] */
#define PADDLE_ONEDNN_POST_SUM 12      /* y += the output's prior contents */
/* y = the depthwise 3x3 convolution of y, zero-padded by 1 on every side,
 * stride alpha (1 or 2), filter operand [C, 1, 1, 3, 3] (C x 9 contiguous
 * floats): conv2d only, on a 1x1 convolution with unit strides and
 * dilations, no padding and no accumulation. The call's output is the
 * depthwise result, [N, C, (H - 1) / alpha + 1, (W - 1) / alpha + 1]; the
 * 1x1 result goes through a buffer of the runtime's, a strip of rows at a
 * time, so it stays in the core's L2 (docs/onednn.md, "Depthwise fusion").
 * Before it only a bias and eltwise kinds; after it a bias (the depthwise
 * one, right after it) and eltwise kinds. Flag bit 2: the depthwise
 * filter is a constant, cached like the weights under the same state. */
#define PADDLE_ONEDNN_POST_DEPTHWISE 13
#define PADDLE_ONEDNN_MAX_POST_OPS 16
#define PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS 1
#define PADDLE_ONEDNN_FLAG_WINOGRAD 2
#define PADDLE_ONEDNN_FLAG_CONSTANT_DEPTHWISE_WEIGHTS 4
#define PADDLE_ONEDNN_MAX_OPERANDS 4

/* A matmul with L - 2 batch dims (L <= 12) in logical dims
 *   c[batch..., M, N] (+)= sum over K of a[batch..., M, K] * b[batch..., K, N]
 * where each operand's logical dim i is its memref dim ((map >> 4 i) & 15) - 1,
 * or, where that is -1 (batch dims only), a broadcast (size 1). L is c's
 * rank. Covers linalg.matmul, linalg.batch_matmul and the generic
 * contractions (folded, broadcast or transposed batches) that
 * paddle-use-onednn matches. */
void _mlir_ciface_paddle_onednn_matmul(
    const paddle_unranked_memref_t *a, const paddle_unranked_memref_t *b,
    const paddle_unranked_memref_t *c, const paddle_unranked_memref_t *e0,
    const paddle_unranked_memref_t *e1, const paddle_unranked_memref_t *e2,
    const paddle_unranked_memref_t *e3, const paddle_unranked_memref_t *state,
    const paddle_unranked_memref_t *program, int64_t a_map, int64_t b_map,
    int64_t c_map, int64_t accumulate);

/* linalg.conv_2d_nchw_fchw on the input zero-padded by pad_top, pad_left
 * before and pad_bottom, pad_right after its spatial dims (all 0: the
 * linalg op itself; paddle-use-onednn folds a padding copy in):
 * out[N, F, OH, OW] (+)= sum over c, kh, kw of
 *   in'[N, c, oh * sh + kh * dh, ow * sw + kw * dw] * filter[F, c, kh, kw]
 * where in'[.., y, x] = in[.., y - pad_top, x - pad_left], 0 outside. */
void _mlir_ciface_paddle_onednn_conv2d(
    const paddle_memref4d_f32_t *input, const paddle_memref4d_f32_t *filter,
    const paddle_memref4d_f32_t *output, const paddle_unranked_memref_t *e0,
    const paddle_unranked_memref_t *e1, const paddle_unranked_memref_t *e2,
    const paddle_unranked_memref_t *e3, const paddle_unranked_memref_t *state,
    const paddle_unranked_memref_t *program, int64_t stride_h, int64_t stride_w,
    int64_t dilation_h, int64_t dilation_w, int64_t pad_top, int64_t pad_left,
    int64_t pad_bottom, int64_t pad_right, int64_t accumulate);

/* linalg.conv_2d_ngchw_gfchw, the grouped form: input [N, G, C, H, W],
 * filter [G, F, C, KH, KW], output [N, G, F, OH, OW]; padding as above. */
void _mlir_ciface_paddle_onednn_conv2d_grouped(
    const paddle_memref5d_f32_t *input, const paddle_memref5d_f32_t *filter,
    const paddle_memref5d_f32_t *output, const paddle_unranked_memref_t *e0,
    const paddle_unranked_memref_t *e1, const paddle_unranked_memref_t *e2,
    const paddle_unranked_memref_t *e3, const paddle_unranked_memref_t *state,
    const paddle_unranked_memref_t *program, int64_t stride_h, int64_t stride_w,
    int64_t dilation_h, int64_t dilation_w, int64_t pad_top, int64_t pad_left,
    int64_t pad_bottom, int64_t pad_right, int64_t accumulate);

/* The same three with bf16 inputs (a and b; input and filter) and an f32
 * output: the products are exact in f32 and summed in f32, as
 * `paddle-convert-precision` leaves them (docs/bf16.md). oneDNN runs them
 * with AMX (`TDPBF16PS`) or `avx512_bf16` where the CPU has them, else
 * converts in its reference-free kernels. Post-op operands stay f32. */
void _mlir_ciface_paddle_onednn_matmul_bf16(
    const paddle_unranked_memref_t *a, const paddle_unranked_memref_t *b,
    const paddle_unranked_memref_t *c, const paddle_unranked_memref_t *e0,
    const paddle_unranked_memref_t *e1, const paddle_unranked_memref_t *e2,
    const paddle_unranked_memref_t *e3, const paddle_unranked_memref_t *state,
    const paddle_unranked_memref_t *program, int64_t a_map, int64_t b_map,
    int64_t c_map, int64_t accumulate);
void _mlir_ciface_paddle_onednn_conv2d_bf16(
    const paddle_memref4d_bf16_t *input, const paddle_memref4d_bf16_t *filter,
    const paddle_memref4d_f32_t *output, const paddle_unranked_memref_t *e0,
    const paddle_unranked_memref_t *e1, const paddle_unranked_memref_t *e2,
    const paddle_unranked_memref_t *e3, const paddle_unranked_memref_t *state,
    const paddle_unranked_memref_t *program, int64_t stride_h, int64_t stride_w,
    int64_t dilation_h, int64_t dilation_w, int64_t pad_top, int64_t pad_left,
    int64_t pad_bottom, int64_t pad_right, int64_t accumulate);
void _mlir_ciface_paddle_onednn_conv2d_grouped_bf16(
    const paddle_memref5d_bf16_t *input, const paddle_memref5d_bf16_t *filter,
    const paddle_memref5d_f32_t *output, const paddle_unranked_memref_t *e0,
    const paddle_unranked_memref_t *e1, const paddle_unranked_memref_t *e2,
    const paddle_unranked_memref_t *e3, const paddle_unranked_memref_t *state,
    const paddle_unranked_memref_t *program, int64_t stride_h, int64_t stride_w,
    int64_t dilation_h, int64_t dilation_w, int64_t pad_top, int64_t pad_left,
    int64_t pad_bottom, int64_t pad_right, int64_t accumulate);

/* linalg.pooling_nchw_max with unit dilations on the input padded with
 * -inf by pad_top, pad_left before and pad_bottom, pad_right after its
 * spatial dims (all 0: the linalg op itself; paddle-use-onednn folds the
 * lowering's -inf padding copy in):
 *   out[N, C, OH, OW] = max over kh < kernel_h, kw < kernel_w of
 *     in'[N, C, oh * stride_h + kh, ow * stride_w + kw]
 * The output's prior contents are ignored (the pass drops the -inf fill
 * before it). Every window must hold an input element (padding smaller than
 * the kernel); a NaN in a window need not win its maximum, unlike
 * arith.maximumf. Output dims that the padded input does not give end the
 * call with PADDLE_INTERNAL. */
void _mlir_ciface_paddle_onednn_max_pool2d(
    const paddle_memref4d_f32_t *input, const paddle_memref4d_f32_t *output,
    int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w,
    int64_t pad_top, int64_t pad_left, int64_t pad_bottom, int64_t pad_right);

/* Copies `input` to `output`, two 4-D f32 buffers of one shape in any
 * layouts (oneDNN's reorder): paddle-use-onednn's copies between a plain
 * buffer and a channels-last one (docs/onednn.md, "Channels-last
 * activations"). Differing shapes end the call with PADDLE_INTERNAL. */
void _mlir_ciface_paddle_onednn_reorder(const paddle_memref4d_f32_t *input,
                                        const paddle_memref4d_f32_t *output);

/* Constant weights reordered into oneDNN's layout since the process started
 * (weight cache misses), for tests. */
int64_t paddle_onednn_weight_reorders(void);

/* Primitives created since the process started (cache misses), for tests. */
int64_t paddle_onednn_primitives_created(void);

/* Of those, convolutions that use Winograd (flag bit 1), for tests. */
int64_t paddle_onednn_winograd_primitives(void);

/* Winograd weights the runtime transformed itself since the process started
 * (winograd_weights.h; the others go through oneDNN's reorder), for tests. */
int64_t paddle_onednn_winograd_transforms(void);

/* Convolution and matmul implementations timed to choose among them
 * (onednn/choice.cpp, chooseImplementation) since the process started, for
 * tests. */
int64_t paddle_onednn_timed_candidates(void);

/* Matmuls whose timed choice started from `gemm:jit` instead of oneDNN's
 * first pick (large products with a run-time B; docs/onednn.md, "Timed
 * choice") since the process started, for tests. */
int64_t paddle_onednn_preferred_starts(void);

/* With 0, convolutions and matmuls with a run-time B take oneDNN's first
 * implementation instead of the fastest of its candidates timed when the
 * primitive is created (also PADDLE_ONEDNN_TIMED_CHOICE=0 at start); for
 * tests and A/B measurements.
 * Primitives already created keep their choice. */
void paddle_onednn_set_timed_choice(int32_t enabled);

/* Calls with a depthwise post-op since the process started, and of those,
 * the ones run in more than one strip of rows; for tests. */
int64_t paddle_onednn_depthwise_calls(void);
int64_t paddle_onednn_depthwise_strip_calls(void);

/* The most bytes the 1x1 result of one strip of a call with a depthwise
 * post-op may take (default 768 KiB, within one core's L2 here); 0: the
 * two convolutions over the whole batch at once (one strip). For tests
 * and A/B measurements. */
void paddle_onednn_set_depthwise_strip_bytes(int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* PADDLE_RUNTIME_ONEDNN_H */
