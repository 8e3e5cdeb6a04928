/* core/data/augment.c -- random crop with zero padding and horizontal flip (attnlab/augment.h). */
#include <string.h>

#include "attnlab/augment.h"
#include "attnlab/threads.h"
#include "../util/need.h"

al_status al_crop_flip(al_tensor **out, const al_tensor *x, int64_t pad, const int64_t *top,
                       const int64_t *left, const int64_t *flip) {
  AL_NEED(out, "crop_flip", "out");
  *out = NULL;
  AL_NEED(x, "crop_flip", "x");
  char buf[96];
  if (x->dtype != AL_F32 || x->ndim != 4)
    return al_seterr(AL_EINVAL, "crop_flip: expected a float32 (B, C, H, W) tensor, got %s",
                     al_shape_str(x, buf, sizeof buf));
  if (pad < 0 || pad > AL_CROP_PAD_MAX)
    return al_seterr(AL_EINVAL, "crop_flip: pad must be in 0..2^40, got %lld", (long long)pad);
  const int64_t B = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  if (B > 0) { AL_NEED(top, "crop_flip", "top"); AL_NEED(left, "crop_flip", "left"); }
  for (int64_t b = 0; b < B; b++) {
    if (top[b] < 0 || top[b] > 2 * pad || left[b] < 0 || left[b] > 2 * pad)
      return al_seterr(AL_EINVAL, "crop_flip: image %lld's offset (%lld, %lld) is outside [0, %lld]",
                       (long long)b + 1, (long long)top[b], (long long)left[b], (long long)(2 * pad));
  }
  al_tensor *y = al_tensor_new(AL_F32, 4, x->shape);
  if (!y) return AL_ENOMEM;
  const float *xs = al_f32(x);
  float *yd = al_f32(y);
  const int64_t s0 = x->stride[0], s1 = x->stride[1], s2 = x->stride[2], s3 = x->stride[3];
  /* one (b, c) plane per iteration: each output element is a copy or a zero, so splitting
   * the planes across threads cannot change a bit */
  const int64_t planes = B * C;
#pragma omp parallel for schedule(static) if (planes * H * W >= AL_PAR_MIN_WORK)
  for (int64_t bc = 0; bc < planes; bc++) {
    const int64_t b = bc / C, c = bc % C;
    const int64_t dy = top[b] - pad, dx = left[b] - pad;
    const int f = flip ? flip[b] != 0 : 0;
    float *o = yd + bc * H * W;
    const float *src = xs + b * s0 + c * s1;
    for (int64_t i = 0; i < H; i++) {
      const int64_t si = i + dy;
      if (si < 0 || si >= H) { memset(o + i * W, 0, (size_t)W * sizeof(float)); continue; }
      for (int64_t j = 0; j < W; j++) {
        const int64_t sj = (f ? W - 1 - j : j) + dx;
        o[i * W + j] = (sj < 0 || sj >= W) ? 0.0f : src[si * s2 + sj * s3];
      }
    }
  }
  *out = y;
  return AL_OK;
}

al_status al_crop_flip_draw(al_rng *g, int64_t B, int64_t pad, int hflip, int64_t *top, int64_t *left,
                            int64_t *flip) {
  if (pad < 0 || pad > AL_CROP_PAD_MAX)
    return al_seterr(AL_EINVAL, "crop_flip: pad must be in 0..2^40, got %lld", (long long)pad);
  /* (a negative B was drawn as nothing, then memset a size_t of 2^64 - 8 bytes of flip) */
  if (B < 0) return al_seterr(AL_EINVAL, "crop_flip: batch size must be >= 0, got %lld", (long long)B);
  if (B > 0) {
    AL_NEED(g, "crop_flip", "the generator");
    AL_NEED(top, "crop_flip", "top"); AL_NEED(left, "crop_flip", "left"); AL_NEED(flip, "crop_flip", "flip");
  }
  if (pad > 0) {
    al_rng_randint(g, top, B, 2 * pad + 1);
    al_rng_randint(g, left, B, 2 * pad + 1);
  } else {
    for (int64_t b = 0; b < B; b++) top[b] = left[b] = 0;
  }
  if (hflip) al_rng_randint(g, flip, B, 2);
  else if (B > 0) memset(flip, 0, (size_t)B * sizeof *flip);
  return AL_OK;
}
