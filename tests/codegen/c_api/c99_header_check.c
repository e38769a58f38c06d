/* The generated C headers are C99 too (with GNU C's alignment attribute): compiled, never run. */
#include "incentive.h"
#include "stackelberg.h"

pbrl_status pbrl_c99_check(void);
pbrl_status pbrl_c99_check(void) {
  static pbrl_incentive_workspace a;
  static pbrl_stackelberg_workspace b;
  return pbrl_incentive_init(&a) == PBRL_OK ? pbrl_stackelberg_init(&b) : PBRL_NULL_POINTER;
}
