/* An estimated model's generated C interface, called from C11 (-pedantic -Werror): observe, the
 * refresh rule, refreshes in slices and whole, the row counts and the model generation refuse bad
 * arguments with the right status and change nothing; a sliced refresh commits after its rows; a
 * checkpoint carries the estimate and a restored workspace, refreshed, goes on like the saved one.
 * Compiled once per model: MODEL, MODEL_UPPER, MODEL_HEADER and PLAYERS (1: observe(s, a, s'),
 * 2: observe(s, a1, a2, s')) come from the build (tests/codegen/CMakeLists.txt). */
#include "c_api_check.h"

enum { kParams = K(PARAMS), kImage = K(CHECKPOINT_BYTES), kRows = K(ROWS), kStates = K(STATES) };
/* Actions of the observed joint row: (a1, a2) of two players, a of one (a2 unused). */
#if PLAYERS == 2
enum { kA2 = kRows / kStates / CAT3(PBRL_, MODEL_UPPER, _LEADER_ACTIONS) };
#define OBSERVE(w, s, a1, a2, s_next) FN(observe)((w), (s), (a1), (a2), (s_next))
#define ROW(s, a1, a2) (((s) * (kRows / kStates / kA2) + (a1)) * kA2 + (a2))
#else
enum { kA2 = 1 };
#define OBSERVE(w, s, a1, a2, s_next) FN(observe)((w), (s), (a1), (s_next))
#define ROW(s, a1, a2) ((s) * (kRows / kStates) + (a1))
#endif
enum { kA1 = kRows / kStates / kA2 };

static Workspace ws, ws2;
static unsigned char image[kImage], slots[2][kImage];
static Scalar x[kParams], x2[kParams];
static int64_t counts[kRows], counts2[kRows];

/* n observations, s' = (s + a1 + a2 + k) mod S: every row visited in turn. */
static void observe_many(Workspace* w, int n) {
  int k;
  for (k = 0; k < n; ++k) {
    const int s = k % kStates, a1 = (k / kStates) % kA1, a2 = (k / (kStates * kA1)) % kA2;
    CHECK(OBSERVE(w, s, a1, a2, (s + a1 + a2 + k) % kStates) == PBRL_OK);
  }
}

static int same_x(const Workspace* a, const Workspace* b) {
  return FN(get_x)(a, x, kParams) == PBRL_OK && FN(get_x)(b, x2, kParams) == PBRL_OK && memcmp(x, x2, sizeof x) == 0;
}

int main(void) {
  int due = -1, committed = -1, slices_run = 0, slot = -1, i;
  int64_t generation = -1;
  Report report;
  printf("%s: workspace %u bytes, checkpoint %u bytes, %d rows\n", MODEL_HEADER, (unsigned)K(WORKSPACE_BYTES),
         (unsigned)kImage, kRows);

  /* Not initialized: every new function refuses, the workspace unchanged. */
  REFUSED(PBRL_NOT_INITIALIZED, &ws, OBSERVE(&ws, 0, 0, 0, 0));
  REFUSED(PBRL_NOT_INITIALIZED, &ws, FN(refresh_due)(&ws, &due));
  REFUSED(PBRL_NOT_INITIALIZED, &ws, FN(refresh_slice)(&ws, 4, &committed));
  REFUSED(PBRL_NOT_INITIALIZED, &ws, FN(refresh)(&ws));
  REFUSED(PBRL_NOT_INITIALIZED, &ws, FN(row_observations)(&ws, counts, kRows));
  REFUSED(PBRL_NOT_INITIALIZED, &ws, FN(model_generation)(&ws, &generation));
  CHECK(due == -1 && committed == -1 && generation == -1);

  CHECK(FN(init)(&ws) == PBRL_OK);
  /* Null pointers, short buffers, indices out of range, max_rows < 1. */
  CHECK(OBSERVE(NULL, 0, 0, 0, 0) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, &ws, FN(refresh_due)(&ws, NULL));
  REFUSED(PBRL_NULL_POINTER, &ws, FN(refresh_slice)(&ws, 4, NULL));
  CHECK(FN(refresh)(NULL) == PBRL_NULL_POINTER);
  REFUSED(PBRL_NULL_POINTER, &ws, FN(row_observations)(&ws, NULL, kRows));
  REFUSED(PBRL_BUFFER_TOO_SMALL, &ws, FN(row_observations)(&ws, counts, kRows - 1));
  REFUSED(PBRL_NULL_POINTER, &ws, FN(model_generation)(&ws, NULL));
  REFUSED(PBRL_OUT_OF_BOUNDS, &ws, OBSERVE(&ws, kStates, 0, 0, 0));
  REFUSED(PBRL_OUT_OF_BOUNDS, &ws, OBSERVE(&ws, -1, 0, 0, 0));
  REFUSED(PBRL_OUT_OF_BOUNDS, &ws, OBSERVE(&ws, 0, kA1, 0, 0));
#if PLAYERS == 2
  REFUSED(PBRL_OUT_OF_BOUNDS, &ws, OBSERVE(&ws, 0, 0, kA2, 0));
#endif
  REFUSED(PBRL_OUT_OF_BOUNDS, &ws, OBSERVE(&ws, 0, 0, 0, kStates));
  REFUSED(PBRL_BAD_SETTING, &ws, FN(refresh_slice)(&ws, 0, &committed));
  CHECK(committed == -1);

  /* Observations count per joint row; the rule asks for a refresh. */
  CHECK(FN(refresh_due)(&ws, &due) == PBRL_OK && due == 0);
  observe_many(&ws, 4 * kRows);
  CHECK(FN(row_observations)(&ws, counts, kRows) == PBRL_OK);
  for (i = 0; i < kRows; ++i) CHECK(counts[i] == 4);
  CHECK(OBSERVE(&ws, 1, 1, kA2 - 1, 0) == PBRL_OK);
  CHECK(FN(row_observations)(&ws, counts, kRows) == PBRL_OK && counts[ROW(1, 1, kA2 - 1)] == 5);
  CHECK(FN(refresh_due)(&ws, &due) == PBRL_OK && due == 1);

  /* A refresh in slices of 2 rows: the rows, then the commit alone; steps meanwhile stay on the old model. */
  CHECK(FN(step)(&ws, &report) == PBRL_OK && report.model_generation == 0);
  do {
    CHECK(FN(refresh_slice)(&ws, 2, &committed) == PBRL_OK);
    ++slices_run;
    if (!committed) CHECK(FN(model_generation)(&ws, &generation) == PBRL_OK && generation == 0);
  } while (!committed && slices_run < 10 * kRows);
  CHECK(slices_run == (kRows + 1) / 2 + 1);
  CHECK(FN(model_generation)(&ws, &generation) == PBRL_OK && generation == 1);
  CHECK(FN(refresh_due)(&ws, &due) == PBRL_OK && due == 0);
  CHECK(FN(step)(&ws, &report) == PBRL_OK && report.model_generation == 1);
  CHECK(FN(refresh)(&ws) == PBRL_OK);
  CHECK(FN(model_generation)(&ws, &generation) == PBRL_OK && generation == 2);
  CHECK(FN(run)(&ws, 3, &report) == PBRL_OK && report.model_generation == 2);

  /* A checkpoint carries the estimate: restored into a fresh workspace (which then refreshes), the
   * counts are the saved ones and, after ws refreshes too, both go on alike. */
  CHECK(FN(save_checkpoint)(&ws, image, sizeof image) == PBRL_OK);
  CHECK(FN(init)(&ws2) == PBRL_OK);
  CHECK(FN(restore_checkpoint)(&ws2, image, sizeof image) == PBRL_OK);
  CHECK(FN(row_observations)(&ws, counts, kRows) == PBRL_OK);
  CHECK(FN(row_observations)(&ws2, counts2, kRows) == PBRL_OK && memcmp(counts, counts2, sizeof counts) == 0);
  CHECK(FN(model_generation)(&ws2, &generation) == PBRL_OK && generation == 3);
  CHECK(FN(refresh)(&ws) == PBRL_OK);
  for (i = 0; i < 4; ++i) CHECK(FN(step)(&ws, NULL) == PBRL_OK && FN(step)(&ws2, NULL) == PBRL_OK);
  CHECK(same_x(&ws, &ws2));

  /* A/B: the newest image with the estimate restores; a torn one is refused in favour of the other. */
  memset(slots, 0xFF, sizeof slots);
  CHECK(FN(checkpoint_slot_to_write)(slots[0], slots[1], kImage, &slot) == PBRL_OK && slot == 0);
  memcpy(slots[0], image, kImage);
  observe_many(&ws, 7);
  CHECK(FN(step)(&ws, NULL) == PBRL_OK);
  CHECK(FN(checkpoint_slot_to_write)(slots[0], slots[1], kImage, &slot) == PBRL_OK && slot == 1);
  CHECK(FN(save_checkpoint)(&ws, slots[1], kImage) == PBRL_OK);
  CHECK(FN(init)(&ws2) == PBRL_OK);
  CHECK(FN(restore_newest_checkpoint)(&ws2, slots[0], slots[1], kImage) == PBRL_OK);
  CHECK(FN(row_observations)(&ws, counts, kRows) == PBRL_OK);
  CHECK(FN(row_observations)(&ws2, counts2, kRows) == PBRL_OK && memcmp(counts, counts2, sizeof counts) == 0);
  slots[1][kImage - 1] ^= 0xFF; /* the newer image torn: its commit word */
  CHECK(FN(init)(&ws2) == PBRL_OK);
  CHECK(FN(restore_newest_checkpoint)(&ws2, slots[0], slots[1], kImage) == PBRL_OK);
  CHECK(FN(row_observations)(&ws2, counts2, kRows) == PBRL_OK);
  {
    int64_t total = 0, saved = 0;
    for (i = 0; i < kRows; ++i) total += counts[i], saved += counts2[i];
    CHECK(saved == total - 7); /* the older image: the 7 observations since it are lost, no more */
  }
  /* A foreign image: corrupt; the workspace unchanged. */
  memset(image, 0x33, sizeof image);
  REFUSED(PBRL_CHECKPOINT_CORRUPT, &ws2, FN(restore_checkpoint)(&ws2, image, sizeof image));

  return checks_passed();
}
