/* attnlab/augment.h -- light image augmentation for training batches: random crop with
 * zero padding and horizontal flip (the "RandomCrop(32, padding=4) + RandomHorizontalFlip"
 * that ViTs on CIFAR need).
 *
 * The draws are explicit: per image b a crop offset (top[b], left[b]) in [0, 2*pad] into
 * the zero-padded (H+2pad, W+2pad) image, and a flip flag. Offsets (pad, pad) without
 * flip is the identity. Every output element depends only on its own image's draws, so
 * the result does not depend on the thread count. No autograd: augmentation applies to
 * input images, which need no gradient. */
#ifndef ATTNLAB_AUGMENT_H
#define ATTNLAB_AUGMENT_H
#include "rng.h"
#include "tensor.h"

/* out (B, C, H, W), new contiguous float32:
 *   out[b,c,i,j] = x[b,c, i + top[b] - pad, jj + left[b] - pad]   (0 outside x),
 *   jj = flip[b] ? W-1-j : j   (crop, then flip, as torchvision applies them).
 * x: float32 (B, C, H, W), any strides. top/left in [0, 2*pad]; flip 0 or 1 (NULL: no flips);
 * pad in 0..AL_CROP_PAD_MAX (2*pad + 1 must not overflow; no image is that large). */
#define AL_CROP_PAD_MAX (INT64_C(1) << 40)
al_status al_crop_flip(al_tensor **out, const al_tensor *x, int64_t pad, const int64_t *top,
                       const int64_t *left, const int64_t *flip);

/* Draws for B images from g, in this order: B tops, B lefts (uniform in [0, 2*pad]; none
 * when pad == 0), then B flips (uniform in {0,1}; none when !hflip, flips all 0).
 * AL_EINVAL, nothing drawn, unless 0 <= pad <= AL_CROP_PAD_MAX. */
al_status al_crop_flip_draw(al_rng *g, int64_t B, int64_t pad, int hflip, int64_t *top, int64_t *left,
                            int64_t *flip);

#endif
