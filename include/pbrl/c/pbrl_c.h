/** @file
 * What every generated C interface (`<name>.h`, written by pbrl-codegen) shares: the status codes,
 * the fixed-width types its functions take, and an alignment specifier for the workspace type
 * that C99 (GNU), C11 and C++ all accept. Plain C: includes no C++ header. */
#ifndef PBRL_C_PBRL_C_H
#define PBRL_C_PBRL_C_H

#include <stddef.h>
#include <stdint.h>
#if !defined(__cplusplus)
#include <stdbool.h>
#endif

#include "pbrl/c/pbrl_status.h"

/** @def PBRL_C_ALIGNAS(n)
 * Before a struct member: the member (and so the struct) is n-byte aligned, whether the header
 * is read as C11, C++ or GNU C99. */
#if defined(__cplusplus)
#define PBRL_C_ALIGNAS(n) alignas(n)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define PBRL_C_ALIGNAS(n) _Alignas(n)
#elif defined(__GNUC__)
#define PBRL_C_ALIGNAS(n) __attribute__((aligned(n)))
#else
#error "pbrl C interfaces need C11, C++11 or a GNU C compiler (an alignment specifier)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The part of a step one `pbrl_<name>_step_slice` call ran (pbrl::StepPart,
 * include/pbrl/solver/step_slices.hpp). */
typedef enum pbrl_step_part {
  PBRL_PART_BEGIN = 0,       /**< checks; M(x) built; the policies of y */
  PBRL_PART_LOWER_MODEL = 1, /**< one player's induced MDP (zero-sum lower level) */
  PBRL_PART_ORACLE_STEP = 2, /**< one exact oracle step */
  PBRL_PART_ROLLOUTS = 3,    /**< at most max_rollouts rollouts of a sampled batch */
  PBRL_PART_EVALUATION = 4,  /**< one policy evaluation */
  PBRL_PART_UPPER = 5,       /**< f and its gradient */
  PBRL_PART_PENALTY = 6,     /**< (part of) the exact penalty's gradient */
  PBRL_PART_PROJECTION = 7   /**< the projected step: the step is committed */
} pbrl_step_part;

/** What one `pbrl_<name>_step_slice` call did. */
typedef struct pbrl_slice {
  pbrl_step_part part; /**< the part it ran */
  int64_t slice;       /**< its index in the step (0: the slice that began the step) */
  bool step_done;      /**< it completed the step: the iterate is committed, the report written */
} pbrl_slice;

/** The part's name ("begin", "rollouts", ...), for logs; never null ("unknown" for other values,
 * which is why it takes an int: the enum's own range holds only its eight values). */
const char* pbrl_step_part_string(int part);

/** How a `pbrl_<name>_solve` call ended, returned with PBRL_OK (pbrl::SolveOutcome,
 * include/pbrl/solver/solve_outcome.hpp). */
typedef enum pbrl_solve_outcome {
  PBRL_SOLVE_CONVERGED = 0,   /**< gap_bound <= gap_tolerance and |G| <= stationarity_tolerance over the window */
  PBRL_SOLVE_STEP_CAP = 1,    /**< max_steps steps and none of the others */
  PBRL_SOLVE_PENALTY_CAP = 2, /**< lambda at lambda_max, stationary, the tolerance not met */
  PBRL_SOLVE_ORACLE_CAP = 3,  /**< max_steps steps, the last step's oracle at inner_steps_max short of its target */
  PBRL_SOLVE_STALLED = 4      /**< stationary with no tolerance to certify (fixed mode, sampled mode) */
} pbrl_solve_outcome;

/** What one `pbrl_<name>_solve` call did. */
typedef struct pbrl_solve_result {
  /** How it ended (meaningful when the call returned PBRL_OK). */
  pbrl_solve_outcome outcome;
  int64_t steps; /**< steps it committed */
} pbrl_solve_result;

/** The outcome's name ("converged", "step_cap", ...); never null ("unknown" for other values). */
const char* pbrl_solve_outcome_string(int outcome);

#ifdef __cplusplus
}
#endif

#endif
