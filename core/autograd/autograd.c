/* core/autograd/autograd.c -- graph recording and the reverse pass (see autograd.h). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/autograd.h"
#include "attnlab/ops.h"
#include "attnlab/threads.h"
#include "../util/need.h"

static _Thread_local int grad_off;   /* 0 = grad mode on (the default) */

int al_grad_enabled(void) { return !grad_off; }
void al_set_grad_enabled(int on) { grad_off = !on; }

al_tensor *al_detach(const al_tensor *t) {
  if (!t) { al_seterr(AL_EINVAL, "detach: the tensor is NULL"); return NULL; }
  return al_tensor_view(t, t->ndim, t->shape, t->stride, t->offset);
}

al_node *al_node_new(const char *name, al_backward_fn bw, int ninputs, al_tensor *const *inputs,
                     al_status *st) {
  *st = AL_OK;
  if (grad_off) return NULL;
  int any = 0;
  for (int i = 0; i < ninputs; i++)
    if (inputs[i] && inputs[i]->requires_grad && inputs[i]->dtype == AL_F32) any = 1;
  if (!any) return NULL;
  al_node *n = calloc(1, sizeof *n);
  al_edge *e = calloc((size_t)ninputs, sizeof *e);
  if (!n || !e) { free(n); free(e); *st = al_seterr(AL_ENOMEM, "%s: out of memory recording the graph", name); return NULL; }
  n->refcount = 1;
  n->name = name;
  n->backward = bw;
  n->ninputs = ninputs;
  n->in = e;
  for (int i = 0; i < ninputs; i++) {
    al_tensor *t = inputs[i];
    if (!t) continue;
    e[i].ndim = t->ndim;
    memcpy(e[i].shape, t->shape, sizeof e[i].shape);
    if (!t->requires_grad || t->dtype != AL_F32) continue;
    e[i].needs = 1;
    if (t->grad_fn) { e[i].fn = t->grad_fn; t->grad_fn->refcount++; }
    else e[i].leaf = al_tensor_retain(t);
  }
  return n;
}

al_status al_node_save(al_node *n, const al_tensor *t) {
  AL_NEED(n, "node_save", "the node"); AL_NEED(t, n->name, "a saved tensor");
  if (n->nsaved >= AL_MAXSAVED) return al_seterr(AL_ESTATE, "%s: too many saved tensors", n->name);
  al_tensor *d = al_detach(t);
  if (!d) return AL_ENOMEM;
  n->saved_version[n->nsaved] = d->storage->version;
  n->saved[n->nsaved++] = d;
  return AL_OK;
}

void al_node_attach(al_node *n, al_tensor *out) {
  n->out_ndim = out->ndim;
  memcpy(n->out_shape, out->shape, sizeof n->out_shape);
  al_node_release(out->grad_fn);
  out->grad_fn = n;
  out->requires_grad = 1;
}

void al_node_retain(al_node *n) { if (n) n->refcount++; }

static void node_free_saved(al_node *n) {
  for (int i = 0; i < n->nsaved; i++) { al_tensor_release(n->saved[i]); n->saved[i] = NULL; }
  n->nsaved = 0;
  if (n->extra && n->free_extra) n->free_extra(n->extra);
  n->extra = NULL;
}

/* Releasing a node can free a long chain of nodes (a 10,000-step recurrence): walk
 * it with an explicit stack rather than recursion. */
void al_node_release(al_node *n) {
  al_node **stack = NULL;
  size_t top = 0, cap = 0;
  while (n) {
    if (--n->refcount == 0) {
      node_free_saved(n);
      al_tensor_release(n->gacc);
      for (int i = 0; i < n->ninputs; i++) {
        al_tensor_release(n->in[i].leaf);
        if (n->in[i].fn) {
          if (top == cap) {
            size_t nc = cap ? cap * 2 : 64;
            al_node **ns = realloc(stack, nc * sizeof *ns);
            if (!ns) { al_node_release(n->in[i].fn); continue; }  /* fall back to recursion */
            stack = ns; cap = nc;
          }
          stack[top++] = n->in[i].fn;
        }
      }
      free(n->in);
      free(n);
    }
    n = top ? stack[--top] : NULL;
  }
  free(stack);
}

al_status al_accumulate(al_tensor *dst, const al_tensor *src) {
  AL_NEED(dst, "accumulate", "dst"); AL_NEED(src, "accumulate", "src");
  if (dst->dtype != AL_F32 || src->dtype != AL_F32)   /* gradients are float32; anything else would be read as its bits */
    return al_seterr(AL_EINVAL, "accumulate: gradients are float32, got %s into %s", al_dtype_name(src->dtype), al_dtype_name(dst->dtype));
  if (!al_same_shape(dst, src)) {
    char a[128], b[128];
    return al_seterr(AL_ESTATE, "gradient shape %s does not match %s", al_shape_str(src, a, sizeof a), al_shape_str(dst, b, sizeof b));
  }
  /* in place only when no element of dst is read as src after it was written: separate storages,
   * or the very same elements (dst += dst). Two shifted views of one storage go through a sum */
  if (al_is_contiguous(dst) && al_is_contiguous(src) && (dst->storage != src->storage || dst->offset == src->offset)) {
    float *d = al_f32(dst);
    const float *s = al_f32(src);
    int64_t n = al_numel(dst);
    #pragma omp parallel for if (n >= AL_PAR_MIN_WORK) schedule(static)
    for (int64_t i = 0; i < n; i++) d[i] += s[i];
    return AL_OK;
  }
  al_tensor *sum = NULL;
  al_status st = al_add(&sum, dst, (al_tensor *)src);
  if (st) return st;
  st = al_copy_into(dst, sum);
  al_tensor_release(sum);
  return st;
}

/* Take ownership of g as the accumulator, or add it into the existing one. The
 * accumulator must be exclusively ours (no alias) before adding into it in place. */
static al_status accumulate_into(al_tensor **acc, al_tensor *g) {
  if (!*acc) { *acc = al_tensor_retain(g); return AL_OK; }
  al_tensor *a = *acc;
  if (a->refcount > 1 || a->storage->refcount > 1 || !al_is_contiguous(a)) {
    al_tensor *c = NULL;
    al_status st = al_contiguous_ref(&c, a);
    if (st) return st;
    if (c == a) {   /* contiguous but shared: copy */
      al_tensor_release(c);
      c = al_tensor_new_like(a);
      if (!c) return AL_ENOMEM;
      al_copy_into(c, a);
    }
    al_tensor_release(a);
    *acc = a = c;
  }
  return al_accumulate(a, g);
}

static al_status leaf_accumulate(al_tensor *leaf, al_tensor *g) {
  /* a fresh gradient nobody else holds becomes .grad as it is (no copy) */
  if (!leaf->grad && g->refcount == 1 && g->storage->refcount == 1 && g->offset == 0 && al_is_contiguous(g) &&
      !g->grad_fn && !g->requires_grad && g->dtype == AL_F32 &&
      (size_t)al_numel(g) * sizeof(float) == g->storage->nbytes) {
    leaf->grad = al_tensor_retain(g);
    return AL_OK;
  }
  if (!leaf->grad) {
    al_tensor *c = al_tensor_new(AL_F32, leaf->ndim, leaf->shape);
    if (!c) return AL_ENOMEM;
    al_status st = al_copy_into(c, g);
    if (st) { al_tensor_release(c); return st; }
    leaf->grad = c;
    return AL_OK;
  }
  return al_accumulate(leaf->grad, g);
}

/* AL_ESTATE when a tensor n saved was changed in place after n's op used it: the backward
 * would run on the new values and return a wrong gradient. */
static al_status check_saved_versions(const al_node *n) {
  for (int i = 0; i < n->nsaved; i++) {
    const al_tensor *t = n->saved[i];
    if (t->storage->version == n->saved_version[i]) continue;
    char buf[128];
    return al_seterr(AL_ESTATE,
                     "backward of %s: a tensor it saved, %s, was changed in place after %s used it "
                     "(version %llu, saved at %llu): change it before using it, or change a clone",
                     n->name, al_shape_str(t, buf, sizeof buf), n->name,
                     (unsigned long long)t->storage->version, (unsigned long long)n->saved_version[i]);
  }
  return AL_OK;
}

al_status al_backward(al_tensor *root, al_tensor *grad, int retain_graph) {
  char buf[128];
  AL_NEED(root, "backward", "the tensor");
  if (!root->requires_grad)
    return al_seterr(AL_ESTATE, "backward: tensor %s does not require grad (no input had requires_grad, or it was made under no_grad)", al_shape_str(root, buf, sizeof buf));
  al_tensor *g0 = NULL;
  if (grad) {
    if (!al_same_shape(grad, root)) {
      char b2[128];
      return al_seterr(AL_EINVAL, "backward: gradient %s does not match the tensor %s", al_shape_str(grad, buf, sizeof buf), al_shape_str(root, b2, sizeof b2));
    }
    /* the backward functions read gout as float32 (autograd.h): an int64 gradient's bits read
     * as floats gave a wrong gradient without an error (as torch, a dtype mismatch is refused) */
    if (grad->dtype != AL_F32)
      return al_seterr(AL_EINVAL, "backward: gradient %s must be float32", al_shape_str(grad, buf, sizeof buf));
    g0 = al_tensor_retain(grad);
  } else {
    if (al_numel(root) != 1)
      return al_seterr(AL_EINVAL, "backward: gradient can be implicit only for a one-element tensor, got %s (pass a gradient)", al_shape_str(root, buf, sizeof buf));
    g0 = al_tensor_new(AL_F32, root->ndim, root->shape);
    if (!g0) return AL_ENOMEM;
    al_fill(g0, 1.0);
  }
  if (!root->grad_fn) {   /* a leaf: its gradient is the seed */
    al_status st = leaf_accumulate(root, g0);
    al_tensor_release(g0);
    return st;
  }

  /* Post-order DFS over nodes; reverse post-order is a topological order. */
  size_t cap = 256, norder = 0, top = 0;
  al_node **order = malloc(cap * sizeof *order);
  struct frame { al_node *n; int next; } *stack = malloc(cap * sizeof *stack);
  size_t scap = cap;
  if (!order || !stack) { free(order); free(stack); al_tensor_release(g0); return al_seterr(AL_ENOMEM, "backward: out of memory"); }
  al_status st = AL_OK;
  /* a mark no traversal has used, even with backward passes running on several threads */
  static atomic_int epoch;
  int mark = atomic_fetch_add_explicit(&epoch, 1, memory_order_relaxed) + 1;
  stack[top++] = (struct frame){root->grad_fn, 0};
  root->grad_fn->mark = mark;
  while (top && !st) {
    struct frame *f = &stack[top - 1];
    if (f->n->freed && !st) {
      st = al_seterr(AL_ESTATE, "backward: trying to go through the graph a second time (node %s; its saved tensors were freed): pass retain_graph=true to the first backward", f->n->name);
      break;
    }
    if (f->next < f->n->ninputs) {
      al_node *c = f->n->in[f->next++].fn;
      if (c && c->mark != mark) {
        c->mark = mark;
        if (top == scap) {
          scap *= 2;
          struct frame *ns = realloc(stack, scap * sizeof *ns);
          if (!ns) { st = al_seterr(AL_ENOMEM, "backward: out of memory"); break; }
          stack = ns;
        }
        stack[top++] = (struct frame){c, 0};
      }
    } else {
      if (norder == cap) {
        cap *= 2;
        al_node **no = realloc(order, cap * sizeof *no);
        if (!no) { st = al_seterr(AL_ENOMEM, "backward: out of memory"); break; }
        order = no;
      }
      order[norder++] = f->n;
      top--;
    }
  }
  free(stack);

  /* Every saved tensor must still hold what its op saw: checked for the whole graph before
   * the first backward runs, so a refusal leaves no gradient half accumulated. */
  for (size_t oi = 0; oi < norder && !st; oi++) st = check_saved_versions(order[oi]);

  int was_on = al_grad_enabled();
  al_set_grad_enabled(0);
  if (!st) {
    root->grad_fn->gacc = g0;
    g0 = NULL;
  }
  al_tensor *gin_small[16];
  for (size_t oi = norder; oi-- > 0 && !st;) {
    al_node *n = order[oi];
    al_tensor *gout = n->gacc;
    n->gacc = NULL;
    if (!gout) continue;   /* no gradient reached this node */
    al_tensor **gin = n->ninputs <= 16 ? gin_small : calloc((size_t)n->ninputs, sizeof *gin);
    if (!gin) { al_tensor_release(gout); st = al_seterr(AL_ENOMEM, "backward: out of memory"); break; }
    memset(gin, 0, (size_t)n->ninputs * sizeof *gin);
    st = n->backward(n, gout, gin);
    if (st) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", al_errmsg());
      al_seterr(st, "backward of %s: %s", n->name, msg);
    }
    for (int i = 0; i < n->ninputs; i++) {
      if (gin[i] && !st && n->in[i].needs) {
        if (gin[i]->ndim != n->in[i].ndim || memcmp(gin[i]->shape, n->in[i].shape, sizeof(int64_t) * (size_t)gin[i]->ndim)) {
          char a[128], b[128];
          st = al_seterr(AL_ESTATE, "backward of %s: gradient %s for input %d, want %s", n->name,
                         al_shape_str(gin[i], a, sizeof a), i + 1, al_dims_str(n->in[i].ndim, n->in[i].shape, b, sizeof b));
        } else if (n->in[i].fn) {
          st = accumulate_into(&n->in[i].fn->gacc, gin[i]);
        } else if (n->in[i].leaf) {
          st = leaf_accumulate(n->in[i].leaf, gin[i]);
        }
      }
      al_tensor_release(gin[i]);
    }
    if (gin != gin_small) free(gin);
    al_tensor_release(gout);
    if (!retain_graph) { node_free_saved(n); n->freed = 1; }
  }
  /* on failure, drop partial accumulators so a retry starts clean */
  for (size_t oi = 0; oi < norder; oi++) { al_tensor_release(order[oi]->gacc); order[oi]->gacc = NULL; }
  al_set_grad_enabled(was_on);
  al_tensor_release(g0);
  free(order);
  return st;
}
