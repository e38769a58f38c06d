/* A C user of the installed package: the C interface that pbrl_add_c_api generated, with the
 * installed pbrl-codegen, for a model of tests/codegen/model. Exits 0 only if init and five steps
 * succeed, the report counts them, and the iteration agrees. */
#include "incentive.h"

#include <stdio.h>

static pbrl_incentive_workspace ws; /* the solver's RAM: a static C object */

int main(void) {
  pbrl_incentive_report report;
  int64_t k = -1;
  pbrl_status st = pbrl_incentive_init(&ws);
  if (st == PBRL_OK) st = pbrl_incentive_run(&ws, 5, &report);
  if (st == PBRL_OK) st = pbrl_incentive_iteration(&ws, &k);
  if (st != PBRL_OK) {
    printf("consumer_c: %s\n", pbrl_status_string(st));
    return 1;
  }
  printf("consumer_c: iteration %lld, report of iteration %lld, workspace %u bytes\n", (long long)k,
         (long long)report.iteration, (unsigned)PBRL_INCENTIVE_WORKSPACE_BYTES);
  return k == 5 && report.iteration == 4 ? 0 : 1;
}
