/* attnlab/ops.h -- differentiable tensor operations.
 *
 * Conventions: `out` first; on success *out holds a new reference. Dims are 0-based
 * here (negative counts from the end); the Lua binding converts from Lua's 1-based
 * dims. Every op records an autograd node when an input requires grad and grad mode
 * is on. Broadcasting follows NumPy/PyTorch rules. Errors name the op and shapes.
 * Every tensor and out argument is required unless its comment says it may be NULL; a NULL
 * one is AL_EINVAL ("matmul: a is NULL"), never a crash. */
#ifndef ATTNLAB_OPS_H
#define ATTNLAB_OPS_H

#include "autograd.h"
#include "norm_registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- elementwise, broadcasting ----------------------------------------------
 * float32 results, except int64 (op) int64 for + - * maximum minimum, which stays int64
 * (wrapping on overflow). Division is always a true division (int64 / int64 -> float32,
 * as PyTorch); comparisons give float32 0/1. maximum/minimum propagate NaN; their gradient
 * is PyTorch's: all of it to the selected operand, half to each at a tie (a == b; the
 * derivative from either side), all of it to both where a or b is NaN, exactly 0 to the other. */
typedef enum { AL_ADD, AL_SUB, AL_MUL, AL_DIV, AL_MAXIMUM, AL_MINIMUM,
               AL_GT, AL_GE, AL_LT, AL_LE, AL_EQ, AL_NE } al_binop;
al_status al_binary(al_tensor **out, al_binop op, al_tensor *a, al_tensor *b);
al_status al_add(al_tensor **out, al_tensor *a, al_tensor *b);
al_status al_sub(al_tensor **out, al_tensor *a, al_tensor *b);
al_status al_mul(al_tensor **out, al_tensor *a, al_tensor *b);
al_status al_div(al_tensor **out, al_tensor *a, al_tensor *b);

typedef enum { AL_NEG, AL_EXP, AL_LOG, AL_SQRT, AL_TANH, AL_SIGMOID, AL_RELU, AL_GELU, AL_SILU,
               AL_SOFTPLUS, AL_ABS, AL_SIN, AL_COS, AL_RSQRT, AL_LOG1P, AL_SIGN, AL_FLOOR,
               AL_ROUND, AL_ERF, AL_UNARY_COUNT } al_unop;
const char *al_unop_name(al_unop op);
/* neg, abs and sign also take int64 (int64 out, exact); the others float32 only (AL_EINVAL).
 * sign keeps NaN and the sign of a zero (NumPy's sign; PyTorch 1.13 gives sign(NaN) = 0); the
 * gradient of relu and abs at 0, and of sign, floor and round, is 0 (as PyTorch). */
al_status al_unary(al_tensor **out, al_unop op, al_tensor *x);
/* out = scale * x + shift (scalar arithmetic from Lua: x*2, x+1, 1-x, ...). */
al_status al_affine(al_tensor **out, al_tensor *x, double scale, double shift);
/* x^p. An int64 x and a whole p >= 0 give int64 (exact, wrapping on overflow, as PyTorch);
 * otherwise float32. */
al_status al_pow_scalar(al_tensor **out, al_tensor *x, double p);
/* base^x for a base > 0 only (AL_EINVAL otherwise: its gradient is base^x log(base); PyTorch
 * also takes 0 and negative bases). */
al_status al_rpow_scalar(al_tensor **out, double base, al_tensor *x);
/* +-inf = no bound. An int64 x with whole-number bounds gives int64; otherwise float32. */
al_status al_clamp(al_tensor **out, al_tensor *x, double lo, double hi);
/* out = cond ? a : b (cond: nonzero = true; any dtype); a, b broadcast. Two int64 operands
 * give int64 (no autograd); otherwise float32. The gradient goes to the operand taken at each
 * position and is exactly 0 for the other, even where it is inf or NaN (as PyTorch; also
 * al_masked_fill's). */
al_status al_where(al_tensor **out, al_tensor *cond, al_tensor *a, al_tensor *b);
/* Conversion (a new contiguous tensor, or a new reference when x is already contiguous
 * and of dtype dt: then writing into *out writes into x). float -> int64 truncates toward zero;
 * NaN, inf and |v| >= 2^63 are AL_EINVAL. Records no autograd node. */
al_status al_to_dtype(al_tensor **out, al_tensor *x, al_dtype dt);

/* ---- reductions ----------------------------------------------------------- */
al_status al_sum_all(al_tensor **out, al_tensor *x);
al_status al_mean_all(al_tensor **out, al_tensor *x);
al_status al_sum_dim(al_tensor **out, al_tensor *x, int dim, int keepdim);
al_status al_mean_dim(al_tensor **out, al_tensor *x, int dim, int keepdim);
/* values and (0-based, int64) indices of the max along dim; ties: lowest index. Either slot
 * may be NULL (only the other result is made), not both. */
al_status al_max_dim(al_tensor **values, al_tensor **indices, al_tensor *x, int dim, int keepdim);
al_status al_min_dim(al_tensor **values, al_tensor **indices, al_tensor *x, int dim, int keepdim);
al_status al_max_all(al_tensor **out, al_tensor *x);
al_status al_min_all(al_tensor **out, al_tensor *x);
/* Fewer than 2 elements along dim (1 when biased) is AL_EINVAL, where PyTorch returns NaN with a
 * warning: a NaN loss term found steps later is harder to trace than the refusal. */
al_status al_var_dim(al_tensor **out, al_tensor *x, int dim, int keepdim, int unbiased);
/* Sum g down to `shape` (ndim 0..AL_MAXDIM; the reverse of broadcasting). */
al_status al_sum_to_shape(al_tensor **out, al_tensor *g, int ndim, const int64_t *shape);

/* ---- shape and indexing (views where possible) ----------------------------- */
al_status al_reshape(al_tensor **out, al_tensor *x, int ndim, const int64_t *shape); /* -1 infers */
al_status al_permute(al_tensor **out, al_tensor *x, const int *perm);
al_status al_transpose(al_tensor **out, al_tensor *x, int d1, int d2);
al_status al_narrow(al_tensor **out, al_tensor *x, int dim, int64_t start, int64_t len);
al_status al_select(al_tensor **out, al_tensor *x, int dim, int64_t index);
al_status al_expand(al_tensor **out, al_tensor *x, int ndim, const int64_t *shape);  /* -1 keeps */
al_status al_squeeze(al_tensor **out, al_tensor *x, int dim);   /* dim = -100: all size-1 dims */
al_status al_unsqueeze(al_tensor **out, al_tensor *x, int dim);
al_status al_contiguous(al_tensor **out, al_tensor *x);   /* differentiable */
al_status al_clone(al_tensor **out, al_tensor *x);        /* differentiable copy */
al_status al_cat(al_tensor **out, al_tensor *const *xs, int n, int dim);
al_status al_stack(al_tensor **out, al_tensor *const *xs, int n, int dim);
/* idx: int64 (0-based) 1-D (or 0-dim). A 0-dim x gives a 0-dim result: exactly one index. */
al_status al_index_select(al_tensor **out, al_tensor *x, int dim, al_tensor *idx);
/* idx: int64 with x's ndim; out[i][j] = x[i][idx[i][j]] along dim. */
al_status al_gather(al_tensor **out, al_tensor *x, int dim, al_tensor *idx);
/* weight (V,D), ids int64 any shape (0-based) -> (..., D). */
al_status al_embedding(al_tensor **out, al_tensor *weight, al_tensor *ids);
/* x with mask (broadcastable to x's shape; nonzero = fill) set to value; x's shape. An int64 x
 * and a whole value give int64; otherwise float32. */
al_status al_masked_fill(al_tensor **out, al_tensor *x, al_tensor *mask, double value);

/* ---- linear algebra -------------------------------------------------------- */
/* (..., M, K) @ (..., K, N) with broadcast batch dims; 1-D operands as in NumPy. */
al_status al_matmul(al_tensor **out, al_tensor *a, al_tensor *b);
/* x (..., IN) W (OUT, IN) b (OUT) or NULL -> (..., OUT). Fused backward. */
al_status al_linear(al_tensor **out, al_tensor *x, al_tensor *w, al_tensor *b);

/* ---- neural-network ops (fused forward and backward) ------------------------ */
/* over the last dim; w, b (D) may be NULL. */
al_status al_layer_norm(al_tensor **out, al_tensor *x, al_tensor *w, al_tensor *b, double eps);
/* A row holding a NaN gives NaN; a row of only -inf gives -inf throughout (the log of the zero
 * row the normalizers give a row with nothing kept, normalizers.h), where PyTorch gives NaN. */
al_status al_log_softmax(al_tensor **out, al_tensor *x, int dim);
/* logits (B, C), labels int64 (B) 0-based -> mean loss (scalar) over the rows whose label is not
 * ignore_index (any value, negative ones too, as torch's -100; INT64_MIN, which no label is, for
 * none). Every row ignored: NaN, as torch. */
al_status al_cross_entropy(al_tensor **out, al_tensor *logits, al_tensor *labels, double smoothing,
                           int64_t ignore_index);
al_status al_mse(al_tensor **out, al_tensor *a, al_tensor *b);   /* mean((a-b)^2) */
struct al_rng;
/* p in [0, 1); rng NULL: this thread's al_rng_default(). */
al_status al_dropout(al_tensor **out, al_tensor *x, double p, struct al_rng *rng);

/* ---- attention normalizers along `dim` (the kinds: norm_registry.h; kernels: normalizers.h)
 * mask: NULL, or a tensor broadcastable to x, nonzero = keep; a NaN or +-inf in it is refused
 * (AL_EINVAL: -inf is an additive mask's, which as nonzero kept what it meant to drop). The
 * parameter of the kind's row (al_norm_desc.param): ratio (AL_NORM_P_RATIO), or alpha
 * (AL_NORM_P_ALPHA) as a tensor broadcastable to x with size 1 along dim (it gets a gradient;
 * an int64 one, which cannot, is taken as float32), or alpha_value when alpha is NULL;
 * max_iter <= 0 means 50. */
al_status al_normalize(al_tensor **out, al_norm_kind kind, al_tensor *x, int dim, al_tensor *mask,
                       double ratio, al_tensor *alpha, double alpha_value, int max_iter);

/* ---- fused multi-head attention core (core/ops/attention.c) ---------------------
 * qkv (B, N, 3D), laid out as timm's (3, heads, D/heads) along the last dim ->
 * out (B, N, D) = concat over heads of f(scale q k^T) v, f = the normalizer `kind`
 * (AL_NORM_P_RATIO rows: ratio; AL_NORM_P_ALPHA rows: alpha = one value per head, a float32
 * tensor of H elements that receives a gradient (or an int64 one, taken as float32, as
 * al_normalize's), or alpha_value when alpha is NULL). key_mask: NULL
 * or (B, N), nonzero = a key that may be attended to (masked keys get weight exactly 0); NaN or
 * +-inf in it is refused, as al_normalize's mask.
 * *probs (if probs != NULL): the weights (B, H, N, N), differentiable as out is (to the q and
 * k parts of qkv, and alpha) when an input requires grad: a loss on them (an entropy or
 * sparsity term, attention distillation) back-propagates as through the unfused chain
 * (matmul, normalizer). Both backwards use them, so do not write into them (a backward then
 * fails naming the op). out and the weights are each the output of one node with a
 * hand-written backward to qkv (and alpha); a loss on out alone never reaches the weights'
 * node, so its gradient and cost are those without the weights. Bitwise identical for any
 * thread count. */
typedef struct {
  int64_t heads;
  double scale;
  al_norm_kind kind;
  double ratio;           /* AL_NORM_P_RATIO */
  al_tensor *alpha;       /* AL_NORM_P_ALPHA: (H) or NULL */
  double alpha_value;     /* AL_NORM_P_ALPHA when alpha == NULL */
  int max_iter;           /* AL_NORM_P_ALPHA: <= 0 means 50 */
  al_tensor *key_mask;    /* (B, N) or NULL */
} al_attention_opts;
al_status al_attention(al_tensor **out, al_tensor **probs, al_tensor *qkv, const al_attention_opts *opts);

#ifdef __cplusplus
}
#endif

#endif
