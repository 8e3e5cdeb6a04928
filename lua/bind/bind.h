/* lua/bind/bind.h -- helpers shared by the binding's files.
 * The binding is thin: check arguments, convert Lua's 1-based dims and indices to
 * the core's 0-based ones, call the core, and turn an al_status into a Lua error
 * that carries the core's message (which names the op and the shapes). */
#ifndef ATTNLAB_BIND_H
#define ATTNLAB_BIND_H

#include <lauxlib.h>
#include <lua.h>

#include "attnlab/ops.h"
#include "attnlab/rng.h"

#define TENSOR_MT "attnlab.Tensor"
/* Registry key of the tensor pretty-printer, function(t) -> string, which the Lua library
 * (lua/attnlab/init.lua) installs; __tostring falls back to "Tensor(float32 (2,3))" without it. */
#define TENSOR_FORMATTER "attnlab.Tensor.formatter"

typedef struct { al_tensor *t; } l_tensor;

al_tensor *l_checktensor(lua_State *L, int idx);
al_tensor *l_totensor(lua_State *L, int idx);            /* NULL if not a tensor; raises if released */
/* A tensor from a tensor, a number (0-dim float32) or a nested table. Borrowed: a new
 * tensor is anchored in a userdata pushed on the stack; do not release it. */
al_tensor *l_checktensorish(lua_State *L, int idx);
/* The nested table of numbers at idx as a new tensor of dtype dt, anchored on the stack as
 * l_checktensorish's. Into int64 every entry must be an integer: 2.5 or NaN is raised, as
 * "attnlab.<fname>: int64 tensor needs integers, got 2.5 at position 1". */
al_tensor *l_tensor_from_table(lua_State *L, int idx, al_dtype dt, const char *fname);
/* src as the source of a write into a tensor of dtype dt: a float32 src into int64 is
 * converted as :long() converts (truncation toward zero; NaN, inf and |v| >= 2^63 raised,
 * naming the element, with the prefix "attnlab.<fname>: "), the result anchored on the stack;
 * else src itself. */
al_tensor *l_write_source(lua_State *L, al_tensor *src, al_dtype dt, const char *fname);
/* Push t (taking over one reference); raises on NULL with al_errmsg(). */
int l_pushtensor(lua_State *L, al_tensor *t);
/* Raise "attnlab.<name>: <core message>". */
int l_raise(lua_State *L, const char *name);
/* v as a value to store in a tensor of dtype dt: any number for float32; for int64 an
 * integer in int64's range (2.5, NaN or 1e30 would be truncated or undefined: raised). */
double l_check_store_value(lua_State *L, double v, al_dtype dt, const char *fname);
/* Raises "attnlab.<fname>: cannot write into <shape>, a view whose elements share memory (an
 * expand): ..." when t has a dim of size > 1 and stride 0: an in-place write there lands on one
 * element several times (copy_ keeps the last row, add_ adds once per alias, t[1] = v writes
 * every row). A shape check only, once per call. */
void l_check_writable(lua_State *L, const al_tensor *t, const char *fname);
/* In-place writes (copy_, fill_, zero_, add_, mul_, normal_, uniform_, t[i] = v) are not
 * recorded by autograd. While grad mode is on, refused when t is the result of a recorded op
 * (it has a grad_fn) or src (may be NULL) requires grad: the backward would not see the write,
 * and the gradients of what came before would be silently wrong (PyTorch records the op). A
 * leaf -- a parameter being initialised or loaded -- may be written: nothing recorded depends
 * on its old values except through saved tensors, which the version counter guards. */
void l_check_inplace_grad(lua_State *L, const al_tensor *t, const al_tensor *src, const char *fname);
/* The options table at idx may hold only the keys in known (NULL-terminated): a mistyped
 * key ({dtyp = "int64"}, {lable_smoothing = 0.1}) would otherwise be ignored and a different
 * computation run. Raises "attnlab.<fname>: unknown option 'k' (known: ...)". */
void l_check_keys(lua_State *L, int idx, const char *fname, const char *const *known);
/* A dtype's name ("float32" or "float", "int64" or "long"); anything else raises
 * "attnlab.<fname>: unknown dtype '<s>' (float32 or int64)". */
al_dtype l_dtype_named(lua_State *L, const char *s, const char *fname);
/* opts[key] as a boolean, def when absent; anything else ("no", 0) raises. */
int l_optbool_field(lua_State *L, int opts, const char *key, int def, const char *fname);
/* Argument idx as a boolean flag (keepdim, training): true or false, def when nil or absent;
 * "yes", 1 or 0 raise "attnlab.<fname>: <what> must be true or false, got ...". */
int l_optbool_arg(lua_State *L, int idx, int def, const char *fname, const char *what);
/* Raises "attnlab.<fname>: unexpected argument #<i + shift> (<value>): <expected>" for the first
 * argument from first on that is not nil: al.zeros({2,3}, 5) ignored the 5. shift: how many
 * arguments the caller removed from the stack before first. */
void l_check_no_more_args(lua_State *L, int first, int shift, const char *fname, const char *expected);
/* The error of l_check_no_more_args for argument i. */
int l_unexpected_arg(lua_State *L, int i, int shift, const char *fname, const char *expected);
/* v as text for an error message: "NaN" (printf would say "-nan" or "nan"), else Lua's %f. */
const char *l_numstr(lua_State *L, double v);
/* Whether v is a whole number an int64 holds (NaN and +-inf are not). */
int l_whole_i64(double v);
/* Writes the number at idx into every element of t (fill_, t[i] = n, al.full): checked by
 * l_check_store_value, and a Lua integer into an int64 tensor goes in exactly (through a
 * double, integers above 2^53 were rounded). */
void l_fill_number(lua_State *L, al_tensor *t, int idx, const char *fname);
/* Operand idx of a binary op: a tensor, or a number as a 0-dim tensor (anchored on the stack):
 * an int64 scalar, exact, when the tensor at other_idx is int64 and the number is whole, as in
 * PyTorch (int tensor + int scalar); else a float32 scalar. */
al_tensor *l_operand(lua_State *L, int idx, int other_idx);
/* 1-based (negative from the end) Lua dim -> 0-based-or-negative core dim. */
int l_checkdim(lua_State *L, int idx, const char *fname);
int l_optdim(lua_State *L, int idx, int def, const char *fname);
/* Shape from a table {a,b,...} or numbers at idx..top. Returns ndim. */
int l_checkshape(lua_State *L, int idx, int64_t *shape, const char *fname);
/* int64 tensor of 1-based indices -> new int64 tensor of 0-based indices (checked >= 1). */
al_tensor *l_index_to0(lua_State *L, al_tensor *idx, const char *fname);

void l_gc_pace(lua_State *L);
/* The young and full collections l_gc_pace has run on this OS thread (al.mem()). */
void l_gc_runs(long *young, long *full);
/* The Generator at idx (or the `generator` field of an options table there), else the
 * default one (lua/bind/rng.c). */
al_rng *l_optrng(lua_State *L, int idx);

/* The Tensor type, put together by l_open_tensor (lua/bind/tensor.c) from its files. */
extern const luaL_Reg l_tensor_functions[];    /* tensor_new.c: al.tensor, zeros, ones, ... */
extern const luaL_Reg l_tensor_view_methods[]; /* tensor_methods.c: geometry, views, autograd */
extern const luaL_Reg l_tensor_data_methods[]; /* tensor_data.c: in-place updates, sumsq, ... */
/* t:requires_grad_([on]), also behind the field assignment t.requires_grad = on. */
int l_tensor_requires_grad_(lua_State *L);

void l_open_tensor(lua_State *L);   /* registers the metatable; fills module table at -1 */
void l_open_ops(lua_State *L);
void l_open_normalizers(lua_State *L);   /* after every other l_open_*: see ops.c */
void l_open_rng(lua_State *L);
void l_open_io(lua_State *L);
void l_open_json(lua_State *L);
void l_open_mixers(lua_State *L);
void l_open_optim(lua_State *L);
void l_open_augment(lua_State *L);   /* lua/bind/augment_bind.c */

#define L_TRY(L, name, expr) do { if ((expr) != AL_OK) return l_raise(L, name); } while (0)

#endif
