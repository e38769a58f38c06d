/* The minimal pbrl firmware in C: a designer learns incentives x for two agents on the device
 * (PBRL on the paper's incentive design) through the C interface pbrl-codegen writes for
 * model.json. The model is in flash, all the solver's RAM is one static workspace, and every few
 * steps the solver's state goes to A/B flash slots, from which it resumes after a reset. */
#include "board.h"
#include "minimal.h"

#include <string.h>

#define STEPS 30            /* outer iterations of the run */
#define CHECKPOINT_EVERY 10 /* steps between checkpoints */
#define SLOT_BYTES 4096u    /* two 2 KiB flash pages, >= PBRL_MINIMAL_CHECKPOINT_BYTES */

static pbrl_minimal_workspace ws; /* all the solver's mutable state */
static unsigned char image[PBRL_MINIMAL_CHECKPOINT_BYTES];
__attribute__((section(".checkpoint"))) static unsigned char slot[2][SLOT_BYTES]; /* flash */
static float x[PBRL_MINIMAL_PARAMS], pi[PBRL_MINIMAL_POLICY_ENTRIES];

/* Into the slot holding no image or the older one: erase, then program (QEMU's flash is RAM). */
static pbrl_status checkpoint(void) {
  int k = 0;
  pbrl_status st = pbrl_minimal_save_checkpoint(&ws, image, sizeof image);
  if (st == PBRL_OK) st = pbrl_minimal_checkpoint_slot_to_write(slot[0], slot[1], SLOT_BYTES, &k);
  if (st != PBRL_OK) return st;
  memset(slot[k], 0xFF, SLOT_BYTES);
  memcpy(slot[k], image, sizeof image);
  return PBRL_OK;
}

/* One tick of the control loop: one slice of a step (bounded work: one part of the step, or at most
 * 3 rollouts), and a checkpoint after every CHECKPOINT_EVERY-th step. No report: no certificate. */
static pbrl_status tick(int64_t* k) {
  pbrl_slice slice;
  pbrl_status st = pbrl_minimal_step_slice(&ws, 3, &slice, NULL); /* an error: the last step is intact */
  if (st == PBRL_OK) st = pbrl_minimal_iteration(&ws, k);
  return st == PBRL_OK && slice.step_done && *k % CHECKPOINT_EVERY == 0 ? checkpoint() : st;
}

int main(void) {
  int64_t k = 0;
  pbrl_status st = pbrl_minimal_init(&ws); /* x = 0, uniform policies */
  /* Resume from the newest complete checkpoint; on the first boot there is none. */
  if (st == PBRL_OK) (void)pbrl_minimal_restore_newest_checkpoint(&ws, slot[0], slot[1], SLOT_BYTES);
  if (st == PBRL_OK) st = pbrl_minimal_iteration(&ws, &k);
  while (st == PBRL_OK && k < STEPS) st = tick(&k);
  if (st == PBRL_OK) st = pbrl_minimal_get_x(&ws, x, PBRL_MINIMAL_PARAMS);
  if (st == PBRL_OK) st = pbrl_minimal_get_policies(&ws, pi, PBRL_MINIMAL_POLICY_ENTRIES);
  if (st != PBRL_OK) {
    board_text(pbrl_status_string(st));
    board_line_end();
    return 1;
  }
  /* x(s, a1, a2) in row s*A1 + a1; the agents' policies pi1(a1|s), pi2(a2|s) in row s. */
  board_rows("x", x, PBRL_MINIMAL_STATES * PBRL_MINIMAL_ACTIONS1, PBRL_MINIMAL_ACTIONS2);
  board_rows("pi1", pi, PBRL_MINIMAL_STATES, PBRL_MINIMAL_ACTIONS1);
  board_rows("pi2", pi + PBRL_MINIMAL_STATES * PBRL_MINIMAL_ACTIONS1, PBRL_MINIMAL_STATES, PBRL_MINIMAL_ACTIONS2);
  return 0;
}
