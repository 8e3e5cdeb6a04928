/* core/runtime/test_hooks.c -- switches the tests flip to reach paths they compare bitwise.
 * They live outside the kernel files because those are compiled once per CPU level
 * (include/attnlab/cpu.h) and a variable must exist once, whichever level runs. */

/* Nonzero sends top-k's n % 16 == 1 rows through the generic last-block path
 * (core/norm/topk.c; declared in core/norm/internal.h). */
int al_topk_lane1_off_ = 0;
