/* attnlab/autograd.h -- define-by-run reverse-mode autograd (as PyTorch).
 *
 * Every op that sees an input with requires_grad (while grad mode is on) records an
 * al_node on its output: the backward function, edges to its inputs (the inputs'
 * own nodes, or the leaf tensors whose .grad receives the gradient), the inputs'
 * shapes, and the tensors the backward needs ("saved", kept as detached aliases so
 * an output saved by its own node makes no reference cycle). al_backward() orders
 * the graph once (iterative DFS, so deep graphs cannot overflow the C stack), runs
 * each node's backward with grad mode off, accumulates into leaves, and frees each
 * node's saved tensors after use unless retain_graph is set. Before any backward runs it
 * checks that no saved tensor was changed in place since it was saved (the storage's
 * version, see tensor.h): if one was, the pass fails with AL_ESTATE naming the op, and no
 * gradient has been accumulated. */
#ifndef ATTNLAB_AUTOGRAD_H
#define ATTNLAB_AUTOGRAD_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BiMamba's node saves its input and 14 parameters (so that each is version-checked) */
#define AL_MAXSAVED 16

typedef struct al_node al_node;

/* Set gin[i] (a new reference, float32, shape = input i's shape; any strides) for
 * every input i with node->in[i].needs; leaving gin[i] NULL means a zero gradient.
 * gout is float32 with the output's shape. */
typedef al_status (*al_backward_fn)(al_node *node, al_tensor *gout, al_tensor **gin);

typedef struct {
  al_node *fn;          /* input made by an op: its node (retained) */
  al_tensor *leaf;      /* input is a leaf that requires grad (retained) */
  uint8_t needs;        /* fn or leaf set */
  int ndim;
  int64_t shape[AL_MAXDIM];
} al_edge;

struct al_node {
  int refcount;
  const char *name;
  al_backward_fn backward;
  int ninputs;
  al_edge *in;
  int nsaved;
  al_tensor *saved[AL_MAXSAVED];
  uint64_t saved_version[AL_MAXSAVED];   /* the storage's version when saved: see al_backward */
  double d[8];          /* op constants (eps, ratio, scale...) */
  int64_t k[8];         /* op integers (dim, sizes...) */
  void *extra;          /* op-owned data, freed by free_extra */
  void (*free_extra)(void *extra);
  int out_ndim;
  int64_t out_shape[AL_MAXDIM];
  /* engine state */
  al_tensor *gacc;
  int mark;
  uint8_t freed;        /* saved tensors released after a backward */
};

/* Grad mode, per OS thread (on at a thread's start): another thread's no_grad does not reach
 * this one's ops. */
int al_grad_enabled(void);
void al_set_grad_enabled(int on);

/* A node for an op over `inputs`, or NULL when nothing needs a gradient (grad mode
 * off or no input requires grad) -- then the op records nothing. On allocation
 * failure returns NULL and sets *st. */
al_node *al_node_new(const char *name, al_backward_fn bw, int ninputs, al_tensor *const *inputs,
                     al_status *st);
al_status al_node_save(al_node *n, const al_tensor *t);   /* saves a detached alias */
void al_node_attach(al_node *n, al_tensor *out);          /* out takes n's reference */
void al_node_release(al_node *n);
void al_node_retain(al_node *n);

/* A detached alias: same storage and geometry, no grad_fn, no requires_grad (NULL, with a
 * message, for a NULL t or no memory). */
al_tensor *al_detach(const al_tensor *t);

/* Reverse pass from `root`. grad: float32 with root's shape (any strides), or NULL for 1 (root
 * must then have one element). */
al_status al_backward(al_tensor *root, al_tensor *grad, int retain_graph);

/* dst += src (both float32, shapes equal; any strides; views of one storage may overlap: src is
 * read as it was before the call). */
al_status al_accumulate(al_tensor *dst, const al_tensor *src);

#ifdef __cplusplus
}
#endif

#endif
