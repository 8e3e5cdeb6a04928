/* core/util/need.h -- the NULL check of a public entry point, private to core/.
 *
 * base.h's convention: a fallible function returns a status with a message and never crashes
 * on what its caller passes. A pointer it needs (a tensor operand, an out slot, a file handle)
 * that is NULL is a bad argument like any other: AL_EINVAL, "<fn>: <what> is NULL", before
 * anything is read or written. The Lua binding never passes NULL; C callers can, e.g. the
 * result of a failed al_tensor_new passed straight on. */
#ifndef ATTNLAB_CORE_NEED_H
#define ATTNLAB_CORE_NEED_H

#include "attnlab/base.h"

#define AL_NEED(p, fn, what) \
  do { if (!(p)) return al_seterr(AL_EINVAL, "%s: %s is NULL", fn, what); } while (0)

#endif
