/* lua/bind/mixers.c -- bindings of the fused sequential-mixer cores (filled in with
 * the mixer kernels of include/attnlab/mixers.h). */
#include "bind.h"

void l_open_mixers(lua_State *L) { (void)L; }
