/* attnlab/optim.h -- fused optimizer updates over flat float32 buffers (n values).
 * One pass per parameter tensor instead of a chain of elementwise ops. Raw kernels, like BLAS
 * routines: they check nothing and report nothing, so the caller keeps the preconditions
 * (non-NULL buffers of n values; finite lr >= 0, 0 <= beta < 1, eps > 0, step >= 1); outside
 * them the parameters become NaN. The Lua bindings (adamw_step, sgd_step) check each one. */
#ifndef ATTNLAB_OPTIM_H
#define ATTNLAB_OPTIM_H
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* AdamW (Loshchilov & Hutter 2019), decoupled weight decay, bias-corrected:
 *   p -= lr*wd*p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
 *   p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)      (t = step >= 1) */
void al_adamw_update(float *p, const float *g, float *m, float *v, int64_t n, double lr, double beta1,
                     double beta2, double eps, double weight_decay, int64_t step);

/* SGD with momentum (PyTorch's form): g' = g + wd p; buf = mu buf + (1-dampening) g'
 * (buf = g' at the first step); p -= lr * (nesterov ? g' + mu buf : buf). */
void al_sgd_update(float *p, const float *g, float *buf, int64_t n, double lr, double momentum,
                   double dampening, double weight_decay, int nesterov, int first_step);

#ifdef __cplusplus
}
#endif

#endif
