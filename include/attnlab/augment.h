/* attnlab/augment.h -- light image augmentation for training batches: random crop of the
 * image padded with zeros of the tensor given, and horizontal flip.
 *
 * What the padding is: the zeros of x as passed in. The training loop (lua/attnlab/run/fit.lua)
 * passes the NORMALIZED batch ((pixel/255 - mean) / std per channel), so there the padded
 * border is 0 after Normalize, i.e. the channel-mean colour of the training split, not black.
 * torchvision's usual CIFAR pipeline, RandomCrop(32, padding=4) + RandomHorizontalFlip before
 * ToTensor + Normalize, pads the raw image with black (fill=0), which Normalize turns into
 * -mean/std. So this equals torchvision's RandomCrop(32, padding=4) + RandomHorizontalFlip
 * applied AFTER Normalize (fill=0 on the normalized tensor); crop offsets (uniform over the
 * 2*pad+1 positions per axis) and the flip probability (1/2) match, the random numbers do not.
 * Kept as it is: committed runs were trained with it (experiments/s2s/cifar65/teacher.json,
 * crop_pad 4), and another padding would change their inputs.
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

#ifdef __cplusplus
extern "C" {
#endif

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
 * AL_EINVAL, nothing drawn, unless 0 <= pad <= AL_CROP_PAD_MAX and B >= 0, with g, top, left
 * and flip set when B > 0. */
al_status al_crop_flip_draw(al_rng *g, int64_t B, int64_t pad, int hflip, int64_t *top, int64_t *left,
                            int64_t *flip);

#ifdef __cplusplus
}
#endif

#endif
