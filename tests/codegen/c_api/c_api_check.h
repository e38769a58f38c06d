/* What the C interface's test programs share: the model's names, CHECK and REFUSED. MODEL (the
 * model's name), MODEL_UPPER and MODEL_HEADER ("<name>.h") come from the build
 * (tests/codegen/CMakeLists.txt). CHECK counts a failure and goes on, so that one run reports every
 * failed check; main() ends with checks_passed(). */
#ifndef PBRL_TESTS_C_API_CHECK_H
#define PBRL_TESTS_C_API_CHECK_H

#include MODEL_HEADER

#include <stdio.h>
#include <string.h>

#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c) CAT3_(a, b, c)
#define FN(f) CAT3(pbrl_, MODEL, _##f) /* FN(step): pbrl_<name>_step */
#define K(c) CAT3(PBRL_, MODEL_UPPER, _##c) /* K(PARAMS): PBRL_<NAME>_PARAMS */
#define T(t) CAT3(pbrl_, MODEL, _##t)

typedef T(workspace) Workspace;
typedef T(report) Report;
typedef T(scalar) Scalar;

static int failures = 0;
#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                               \
    }                                                                           \
  } while (0)

/* Static, as firmware holds it: REFUSED's copy of the workspace before the call. */
static Workspace before;

/* `call` returns `status` and the workspace `w` keeps every byte. */
#define REFUSED(status, w, call)                     \
  do {                                               \
    memcpy(&before, (w), sizeof before);             \
    CHECK((call) == (status));                       \
    CHECK(memcmp(&before, (w), sizeof before) == 0); \
  } while (0)

/* The program's exit status: 0 if every check passed (and a line saying so), else 1. */
static int checks_passed(void) {
  if (failures == 0) printf("%s: all checks passed\n", MODEL_HEADER);
  return failures == 0 ? 0 : 1;
}

#endif
