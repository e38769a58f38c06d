/* The firmware example in C: the incentive designer of examples/firmware (same model, same
 * settings), driven through the C interface pbrl-codegen writes for designer.json. It steps in a
 * loop, checkpoints to A/B flash slots every 10 steps, then "reboots": a second workspace resumes
 * from the newest checkpoint and must go on exactly like the first. Exit status 0 only if it does. */
#include "board.h"
#include "designer.h"

#include <string.h>

#define SLOT_BYTES 4096u /* two 2 KiB flash pages, >= PBRL_DESIGNER_CHECKPOINT_BYTES */
static pbrl_designer_workspace ws, rebooted;        /* all the solver's RAM, static */
static unsigned char image[PBRL_DESIGNER_CHECKPOINT_BYTES];
__attribute__((section(".checkpoint"))) static unsigned char slot[2][SLOT_BYTES]; /* flash */
static float x[2][PBRL_DESIGNER_PARAMS], pi[2][PBRL_DESIGNER_POLICY_ENTRIES];

static int ok(pbrl_status st, const char* what) {
  if (st == PBRL_OK) return 1;
  board_text(what);
  board_text(": ");
  board_text(pbrl_status_string(st));
  board_line_end();
  return 0;
}

/* Into the slot holding no image or the older one: erase, then program (QEMU's flash is RAM). */
static int checkpoint(void) {
  int k = 0;
  if (!ok(pbrl_designer_save_checkpoint(&ws, image, sizeof image), "save") ||
      !ok(pbrl_designer_checkpoint_slot_to_write(slot[0], slot[1], SLOT_BYTES, &k), "slot"))
    return 0;
  memset(slot[k], 0xFF, SLOT_BYTES);
  memcpy(slot[k], image, sizeof image);
  return 1;
}

int main(void) {
  pbrl_designer_report r;
  int64_t k = 0;
  int i, same;
  board_text("pbrl C firmware example: workspace ");
  board_integer(PBRL_DESIGNER_WORKSPACE_BYTES);
  board_text(" bytes RAM, checkpoint image ");
  board_integer(PBRL_DESIGNER_CHECKPOINT_BYTES);
  board_line_end();
  memset(slot, 0xFF, sizeof slot); /* erased flash */
  if (!ok(pbrl_designer_init(&ws), "init")) return 1;
  while (k < 30) {
    if (!ok(pbrl_designer_step(&ws, &r), "step")) return 1;
    if ((k = r.iteration + 1) % 10 != 0) continue;
    board_text("iteration ");
    board_integer(k);
    board_text("  designer value ");
    board_fixed(-r.upper_objective);
    board_text("  NE gap estimate ");
    board_fixed(r.penalty);
    board_line_end();
    if (!checkpoint()) return 1;
  }
  /* Reboot: a fresh workspace restores the newest slot; then both run 10 more steps. */
  if (!ok(pbrl_designer_init(&rebooted), "init") ||
      !ok(pbrl_designer_restore_newest_checkpoint(&rebooted, slot[0], slot[1], SLOT_BYTES), "restore") ||
      !ok(pbrl_designer_iteration(&rebooted, &k), "iteration"))
    return 1;
  board_text("reboot: resumed at iteration ");
  board_integer(k);
  board_line_end();
  for (i = 0; i < 2; ++i) {
    pbrl_designer_workspace* w = i == 0 ? &ws : &rebooted;
    if (!ok(pbrl_designer_run(w, 10, NULL), "run") || !ok(pbrl_designer_get_x(w, x[i], PBRL_DESIGNER_PARAMS), "x") ||
        !ok(pbrl_designer_get_policies(w, pi[i], PBRL_DESIGNER_POLICY_ENTRIES), "policies"))
      return 1;
  }
  same = memcmp(x[0], x[1], sizeof x[0]) == 0 && memcmp(pi[0], pi[1], sizeof pi[0]) == 0;
  board_text(same ? "resumed workspace matches the original 10 steps on: PASS" : "resumed workspace differs: FAIL");
  board_line_end();
  return same ? 0 : 1;
}
