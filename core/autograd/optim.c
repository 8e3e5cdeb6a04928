/* core/autograd/optim.c -- fused AdamW and SGD updates (see attnlab/optim.h). */
#include <math.h>
#include "attnlab/optim.h"

void al_adamw_update(float *p, const float *g, float *m, float *v, int64_t n, double lr, double beta1,
                     double beta2, double eps, double weight_decay, int64_t step) {
  double bc1 = 1.0 - pow(beta1, (double)step), bc2 = 1.0 - pow(beta2, (double)step);
  float decay = (float)(1.0 - lr * weight_decay);
  float b1 = (float)beta1, b2 = (float)beta2, a1 = (float)(1.0 - beta1), a2 = (float)(1.0 - beta2);
  float step_size = (float)(lr / bc1), rbc2 = (float)(1.0 / sqrt(bc2)), e = (float)eps;
  for (int64_t i = 0; i < n; i++) {
    float gi = g[i];
    float mi = b1 * m[i] + a1 * gi;
    float vi = b2 * v[i] + a2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i] * decay - step_size * mi / (sqrtf(vi) * rbc2 + e);
  }
}

void al_sgd_update(float *p, const float *g, float *buf, int64_t n, double lr, double momentum,
                   double dampening, double weight_decay, int nesterov, int first_step) {
  float mu = (float)momentum, damp = (float)(1.0 - dampening), wd = (float)weight_decay, l = (float)lr;
  for (int64_t i = 0; i < n; i++) {
    float gi = g[i] + wd * p[i];
    if (mu != 0) {
      float b = first_step ? gi : mu * buf[i] + damp * gi;
      buf[i] = b;
      gi = nesterov ? gi + mu * b : b;
    }
    p[i] -= l * gi;
  }
}
