/* A model's generated C interface, called from C11 (-pedantic -Werror): every function refuses null
 * pointers, short buffers and an uninitialized (or copied) workspace with the right status and
 * changes nothing; steps and runs advance; a checkpoint restored into a second workspace continues
 * exactly like the first; a step in slices is the step. Compiled once per model: MODEL (its name), MODEL_UPPER and MODEL_HEADER
 * ("<name>.h") come from the build (tests/codegen/CMakeLists.txt). */
#include "c_api_check.h"

#include <math.h>

enum { kParams = K(PARAMS), kPolicies = K(POLICY_ENTRIES), kImage = K(CHECKPOINT_BYTES) };

/* Static, as firmware holds them; ws3 is a copy of ws made with memcpy. */
static Workspace ws, ws2, ws3;
static unsigned char image[kImage + 8], image2[kImage + 8], slots[2][kImage], saved_image[kImage + 8];
static Scalar x[kParams], x2[kParams], x0[kParams], pi[kPolicies], pi2[kPolicies];

/* Every call on a workspace no init succeeded on. */
static void refuses_uninitialized(Workspace* w) {
  Report report;
  int64_t k = -1;
  memset(&report, 0x5A, sizeof report);
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(step)(w, &report));
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(step)(w, NULL));
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(run)(w, 3, &report));
  {
    pbrl_solve_result result;
    REFUSED(PBRL_NOT_INITIALIZED, w, FN(solve)(w, 3, &result, &report));
  }
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(iteration)(w, &k));
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(get_x)(w, x, kParams));
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(get_policies)(w, pi, kPolicies));
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(save_checkpoint)(w, image, sizeof image));
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(restore_checkpoint)(w, saved_image, sizeof saved_image));
  REFUSED(PBRL_NOT_INITIALIZED, w, FN(restore_newest_checkpoint)(w, slots[0], slots[1], kImage));
  CHECK(k == -1);
  CHECK(((const unsigned char*)&report)[0] == 0x5A);
}

/* Every argument check of every function, on an initialized workspace (and the null workspace). */
static void refuses_bad_arguments(Workspace* w) {
  Report report;
  int64_t k = -1;
  int slot = -1;
  size_t i;
  Scalar outside[kParams], not_finite[kParams];
  for (i = 0; i < kParams; ++i) outside[i] = not_finite[i] = (Scalar)0;
  outside[kParams - 1] = (Scalar)1e6; /* beyond every test model's box */
  not_finite[0] = (Scalar)NAN;
  memset(&report, 0x5A, sizeof report);
  memset(image, 0x33, sizeof image);
  memset(x, 0x33, sizeof x);
  memset(pi, 0x33, sizeof pi);

  CHECK(FN(init)(NULL) == PBRL_NULL_POINTER);
  CHECK(FN(init_with)(NULL, outside, kParams) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, w, FN(init_with)(w, NULL, kParams));
  REFUSED(PBRL_BUFFER_TOO_SMALL, w, FN(init_with)(w, outside, kParams - 1));
  REFUSED(PBRL_OUT_OF_BOUNDS, w, FN(init_with)(w, outside, kParams));
  REFUSED(PBRL_NOT_FINITE, w, FN(init_with)(w, not_finite, kParams));

  CHECK(FN(step)(NULL, &report) == PBRL_NULL_POINTER);
  CHECK(FN(run)(NULL, 1, &report) == PBRL_NULL_POINTER);
  REFUSED(PBRL_BAD_SETTING, w, FN(run)(w, -1, &report));
  {
    pbrl_solve_result result;
    result.steps = -3;
    CHECK(FN(solve)(NULL, 1, &result, &report) == PBRL_NULL_POINTER);
    REFUSED(PBRL_NULL_POINTER, w, FN(solve)(w, 1, NULL, &report));
    REFUSED(PBRL_BAD_SETTING, w, FN(solve)(w, -1, &result, &report));
    CHECK(result.steps == -3);
  }
  CHECK(FN(iteration)(NULL, &k) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, w, FN(iteration)(w, NULL));

  CHECK(FN(get_x)(NULL, x, kParams) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, w, FN(get_x)(w, NULL, kParams));
  REFUSED(PBRL_BUFFER_TOO_SMALL, w, FN(get_x)(w, x, kParams - 1));
  CHECK(FN(get_policies)(NULL, pi, kPolicies) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, w, FN(get_policies)(w, NULL, kPolicies));
  REFUSED(PBRL_BUFFER_TOO_SMALL, w, FN(get_policies)(w, pi, kPolicies - 1));

  CHECK(FN(save_checkpoint)(NULL, image, sizeof image) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, w, FN(save_checkpoint)(w, NULL, sizeof image));
  REFUSED(PBRL_BUFFER_TOO_SMALL, w, FN(save_checkpoint)(w, image, kImage - 1));
  CHECK(FN(restore_checkpoint)(NULL, saved_image, sizeof saved_image) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, w, FN(restore_checkpoint)(w, NULL, sizeof saved_image));
  REFUSED(PBRL_BUFFER_TOO_SMALL, w, FN(restore_checkpoint)(w, saved_image, kImage - 1));
  REFUSED(PBRL_CHECKPOINT_CORRUPT, w, FN(restore_checkpoint)(w, image, sizeof image)); /* 0x33 bytes */
  CHECK(FN(restore_newest_checkpoint)(NULL, slots[0], slots[1], kImage) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, w, FN(restore_newest_checkpoint)(w, NULL, slots[1], kImage));
  REFUSED(PBRL_NULL_POINTER, w, FN(restore_newest_checkpoint)(w, slots[0], NULL, kImage));
  REFUSED(PBRL_BUFFER_TOO_SMALL, w, FN(restore_newest_checkpoint)(w, slots[0], slots[1], kImage - 1));

  CHECK(FN(checkpoint_slot_to_write)(NULL, slots[1], kImage, &slot) == PBRL_NULL_POINTER);
  CHECK(FN(checkpoint_slot_to_write)(slots[0], NULL, kImage, &slot) == PBRL_NULL_POINTER);
  CHECK(FN(checkpoint_slot_to_write)(slots[0], slots[1], kImage, NULL) == PBRL_NULL_POINTER);
  CHECK(FN(checkpoint_slot_to_write)(slots[0], slots[1], kImage - 1, &slot) == PBRL_BUFFER_TOO_SMALL);

  /* What the refusals were given stayed as it was too. */
  CHECK(k == -1 && slot == -1);
  CHECK(((const unsigned char*)&report)[sizeof report - 1] == 0x5A);
  for (i = 0; i < sizeof image; ++i) CHECK(image[i] == 0x33);
  CHECK(((const unsigned char*)x)[0] == 0x33 && ((const unsigned char*)pi)[sizeof pi - 1] == 0x33);
}

/* The bilevel answer and (a Stackelberg model) the leader's policy: refusals change nothing, the
 * workspace is not changed by a call, the answer is certified and the policy is softmax(x). */
static T(value_workspace) scratch;
static void bilevel_answer(Workspace* w) {
  T(bilevel_value) v;
  memset(&v, 0x5A, sizeof v);
  CHECK(FN(value_at_best_response)(NULL, &scratch, &v) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, w, FN(value_at_best_response)(w, NULL, &v));
  REFUSED(PBRL_NULL_POINTER, w, FN(value_at_best_response)(w, &scratch, NULL));
  memset(&ws3, 0, sizeof ws3);
  REFUSED(PBRL_NOT_INITIALIZED, &ws3, FN(value_at_best_response)(&ws3, &scratch, &v));
  CHECK(((const unsigned char*)&v)[0] == 0x5A);
  REFUSED(PBRL_OK, w, FN(value_at_best_response)(w, &scratch, &v));
  CHECK(isfinite(v.value) && v.lower_level_gap >= 0 && v.iterations > 0 && v.converged);
#if LEADER
  {
    enum { kLeader = K(LEADER_POLICY_ENTRIES), kLeaderActions = K(LEADER_ACTIONS) };
    Scalar leader[kLeader];
    int s, a;
    CHECK(FN(get_leader_policy)(NULL, leader, kLeader) == PBRL_NULL_POINTER);
    REFUSED(PBRL_NULL_POINTER, w, FN(get_leader_policy)(w, NULL, kLeader));
    REFUSED(PBRL_BUFFER_TOO_SMALL, w, FN(get_leader_policy)(w, leader, kLeader - 1));
    REFUSED(PBRL_OK, w, FN(get_leader_policy)(w, leader, kLeader));
    CHECK(FN(get_x)(w, x, kParams) == PBRL_OK);
    for (s = 0; s < kLeader / kLeaderActions; ++s) {
      double z = 0.0;
      for (a = 0; a < kLeaderActions; ++a) z += exp((double)x[s * kLeaderActions + a]);
      for (a = 0; a < kLeaderActions; ++a)
        CHECK(fabs((double)leader[s * kLeaderActions + a] - exp((double)x[s * kLeaderActions + a]) / z) < 1e-5);
    }
  }
#endif
}

/* The iterates of two workspaces, and their checkpoint images, are the same bytes. */
static int same_state(const Workspace* a, const Workspace* b) {
  return FN(get_x)(a, x, kParams) == PBRL_OK && FN(get_x)(b, x2, kParams) == PBRL_OK &&
         FN(get_policies)(a, pi, kPolicies) == PBRL_OK && FN(get_policies)(b, pi2, kPolicies) == PBRL_OK &&
         FN(save_checkpoint)(a, image, sizeof image) == PBRL_OK &&
         FN(save_checkpoint)(b, image2, sizeof image2) == PBRL_OK && memcmp(x, x2, sizeof x) == 0 &&
         memcmp(pi, pi2, sizeof pi) == 0 && memcmp(image, image2, kImage) == 0;
}

/* A step in slices: refusals; the slices (one rollout at most each) of a step give the step's iterate,
 * image and report; a checkpoint between slices is the image of the last completed step. */
static void slices(void) {
  pbrl_slice slice;
  Report a, b;
  int i;
  int64_t count;
  slice.slice = -3;
  CHECK(FN(step_slice)(NULL, 1, &slice, NULL) == PBRL_NULL_POINTER);
  memset(&ws3, 0, sizeof ws3);
  REFUSED(PBRL_NOT_INITIALIZED, &ws3, FN(step_slice)(&ws3, 1, &slice, NULL));
  CHECK(FN(init)(&ws) == PBRL_OK && FN(init)(&ws2) == PBRL_OK);
  REFUSED(PBRL_NULL_POINTER, &ws2, FN(step_slice)(&ws2, 1, NULL, NULL));
  REFUSED(PBRL_BAD_SETTING, &ws2, FN(step_slice)(&ws2, 0, &slice, NULL));
  CHECK(slice.slice == -3);
  for (i = 0; i < 3; ++i) {
    CHECK(FN(step)(&ws, i == 1 ? NULL : &a) == PBRL_OK);
    count = 0;
    do {
      CHECK(FN(step_slice)(&ws2, 1, &slice, i == 1 ? NULL : &b) == PBRL_OK);
      CHECK(slice.slice == count++);
      CHECK(strcmp(pbrl_step_part_string(slice.part), "unknown") != 0);
    } while (!slice.step_done && count < 10000);
    CHECK(slice.part == PBRL_PART_PROJECTION && count > 3);
    CHECK(same_state(&ws, &ws2));
    if (i != 1)
      CHECK(a.iteration == b.iteration && a.upper_objective == b.upper_objective && a.penalty == b.penalty &&
            a.objective == b.objective && a.gap_bound == b.gap_bound);
  }
  CHECK(FN(save_checkpoint)(&ws2, saved_image, sizeof saved_image) == PBRL_OK);
  CHECK(FN(step_slice)(&ws2, 1, &slice, NULL) == PBRL_OK && slice.part == PBRL_PART_BEGIN);
  CHECK(FN(step_slice)(&ws2, 1, &slice, NULL) == PBRL_OK && !slice.step_done);
  CHECK(FN(save_checkpoint)(&ws2, image2, sizeof image2) == PBRL_OK);
  CHECK(memcmp(saved_image, image2, kImage) == 0);
  CHECK(strcmp(pbrl_step_part_string(PBRL_PART_ROLLOUTS), "rollouts") == 0);
  CHECK(strcmp(pbrl_step_part_string(PBRL_PART_PROJECTION), "projection") == 0);
  CHECK(strcmp(pbrl_step_part_string(-1), "unknown") == 0 && strcmp(pbrl_step_part_string(8), "unknown") == 0);
  CHECK(strcmp(pbrl_step_part_string(99), "unknown") == 0);
}

int main(void) {
  Report report;
  int64_t k = -1;
  int i, slot = -1;
  double row = 0.0;
  printf("%s: workspace %u bytes, alignment %u, checkpoint %u bytes, %d parameters, %d policy entries\n",
         MODEL_HEADER, (unsigned)K(WORKSPACE_BYTES), (unsigned)K(WORKSPACE_ALIGN), (unsigned)kImage, kParams,
         kPolicies);
  CHECK(strcmp(pbrl_status_string(PBRL_BUFFER_TOO_SMALL), "buffer_too_small") == 0);
  /* A value no status has (within the enum's range, which C++ code may rely on). */
  CHECK(strcmp(pbrl_status_string((pbrl_status)31), "unknown") == 0);

  /* A zeroed static workspace is not initialized. */
  refuses_uninitialized(&ws);

  CHECK(FN(init)(&ws) == PBRL_OK);
  CHECK(FN(iteration)(&ws, &k) == PBRL_OK && k == 0);
  CHECK(FN(get_x)(&ws, x, kParams) == PBRL_OK);
  for (i = 0; i < kParams; ++i) CHECK(x[i] == (Scalar)0); /* 0 lies in every test model's box */
  /* Uniform policies: every entry the same (both players of the game model have as many actions)
   * and the rows, one per state and player, summing to one. */
  CHECK(FN(get_policies)(&ws, pi, kPolicies) == PBRL_OK);
  for (i = 0; i < kPolicies; ++i) {
    CHECK(pi[i] == pi[0]);
    row += pi[i];
  }
  CHECK(pi[0] > (Scalar)0 && fabs(fmod(row + 0.5, (double)K(STATES)) - 0.5) < 1e-5);

  /* Steps and runs, with and without a report. */
  CHECK(FN(step)(&ws, &report) == PBRL_OK && report.iteration == 0);
  CHECK(isfinite(report.upper_objective) && isfinite(report.penalty) && isfinite(report.objective));
  CHECK(FN(step)(&ws, NULL) == PBRL_OK);
  report.iteration = -7;
  CHECK(FN(run)(&ws, 0, &report) == PBRL_OK && report.iteration == -7); /* no step, no report */
  CHECK(FN(run)(&ws, 8, &report) == PBRL_OK && report.iteration == 9);
  CHECK(FN(iteration)(&ws, &k) == PBRL_OK && k == 10);
  /* solve: at most max_steps steps, an outcome with PBRL_OK, the last step's report. */
  {
    pbrl_solve_result result;
    CHECK(FN(solve)(&ws2, 0, &result, NULL) == PBRL_NOT_INITIALIZED);
    CHECK(FN(init)(&ws2) == PBRL_OK);
    CHECK(FN(solve)(&ws2, 3, &result, &report) == PBRL_OK);
    CHECK(result.steps >= 0 && result.steps <= 3);
    CHECK(result.outcome == PBRL_SOLVE_CONVERGED || result.steps == 3);
    CHECK(strcmp(pbrl_solve_outcome_string(result.outcome), "unknown") != 0);
    CHECK(FN(iteration)(&ws2, &k) == PBRL_OK && k == result.steps);
    if (result.steps > 0) CHECK(report.iteration == result.steps - 1 && report.converged == (result.outcome == PBRL_SOLVE_CONVERGED));
    CHECK(strcmp(pbrl_solve_outcome_string(PBRL_SOLVE_PENALTY_CAP), "penalty_cap") == 0);
    CHECK(strcmp(pbrl_solve_outcome_string(-1), "unknown") == 0 && strcmp(pbrl_solve_outcome_string(5), "unknown") == 0);
  }
  CHECK(FN(get_x)(&ws, x, kParams) == PBRL_OK);
  row = 0.0;
  for (i = 0; i < kParams; ++i) row += fabs((double)x[i]);
  CHECK(row > 0.0); /* x moved */

  refuses_bad_arguments(&ws);
  CHECK(FN(iteration)(&ws, &k) == PBRL_OK && k == 10);
  bilevel_answer(&ws);

  /* A workspace copied with memcpy is not initialized: its solver would point at ws's problem. */
  memcpy(&ws3, &ws, sizeof ws3);
  refuses_uninitialized(&ws3);

  /* Checkpoint at iteration 10, restored into a second workspace: both go on alike. */
  CHECK(FN(save_checkpoint)(&ws, saved_image, sizeof saved_image) == PBRL_OK);
  CHECK(FN(init)(&ws2) == PBRL_OK);
  CHECK(!same_state(&ws, &ws2));
  CHECK(FN(restore_checkpoint)(&ws2, saved_image, sizeof saved_image) == PBRL_OK);
  CHECK(FN(iteration)(&ws2, &k) == PBRL_OK && k == 10);
  CHECK(same_state(&ws, &ws2));
  for (i = 0; i < 5; ++i) CHECK(FN(step)(&ws, NULL) == PBRL_OK && FN(step)(&ws2, &report) == PBRL_OK);
  CHECK(report.iteration == 14);
  CHECK(same_state(&ws, &ws2));

  /* A/B slots: an erased pair writes slot 0, then the older; the newest restores. */
  memset(slots, 0xFF, sizeof slots);
  CHECK(FN(checkpoint_slot_to_write)(slots[0], slots[1], kImage, &slot) == PBRL_OK && slot == 0);
  REFUSED(PBRL_CHECKPOINT_CORRUPT, &ws2, FN(restore_newest_checkpoint)(&ws2, slots[0], slots[1], kImage));
  memcpy(slots[0], saved_image, kImage); /* iteration 10 */
  CHECK(FN(save_checkpoint)(&ws, slots[1], kImage) == PBRL_OK); /* iteration 15 */
  CHECK(FN(checkpoint_slot_to_write)(slots[0], slots[1], kImage, &slot) == PBRL_OK && slot == 0);
  CHECK(FN(init)(&ws2) == PBRL_OK); /* starts over: iteration 0 */
  CHECK(FN(iteration)(&ws2, &k) == PBRL_OK && k == 0);
  CHECK(FN(restore_newest_checkpoint)(&ws2, slots[0], slots[1], kImage) == PBRL_OK);
  CHECK(FN(iteration)(&ws2, &k) == PBRL_OK && k == 15);
  CHECK(same_state(&ws, &ws2));

  /* init_with: x0 is the caller's, exactly. */
  for (i = 0; i < kParams; ++i) x0[i] = (Scalar)(0.01 * (i % 7) - 0.02);
  CHECK(FN(init_with)(&ws2, x0, kParams) == PBRL_OK);
  CHECK(FN(get_x)(&ws2, x, kParams) == PBRL_OK && memcmp(x, x0, sizeof x) == 0);

  slices();

  return checks_passed();
}
