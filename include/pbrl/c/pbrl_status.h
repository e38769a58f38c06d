/** @file
 * Status codes of pbrl's C interfaces (the functions pbrl-codegen writes for a model, `<name>.h`).
 * Each value equals the pbrl::Status of the same name (include/pbrl/core/status.hpp); src/c_status.cpp
 * checks that at compile time, so the two cannot drift. The C interfaces need no codes of their
 * own: a null pointer, a short buffer and a workspace that was never initialized are
 * PBRL_NULL_POINTER, PBRL_BUFFER_TOO_SMALL and PBRL_NOT_INITIALIZED, as in C++.
 * On any status but PBRL_OK the call has changed nothing it was given. */
#ifndef PBRL_C_PBRL_STATUS_H
#define PBRL_C_PBRL_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/** What a C interface call returns: PBRL_OK, or why it refused or failed (nothing it was given
 * changed then). */
typedef enum pbrl_status {
  /** The call did what it was asked. */
  PBRL_OK = 0,
  PBRL_NULL_POINTER = 1,          /**< a required pointer (workspace, array, buffer) is null */
  PBRL_NOT_FINITE = 2,            /**< an input holds NaN or infinity */
  PBRL_BAD_DISCOUNT = 3,          /**< discount outside [0, 1) */
  PBRL_BAD_REGULARIZATION = 4,    /**< tau < 0, or a reference row that is not a distribution > 0 */
  PBRL_BAD_DISTRIBUTION = 5,      /**< initial distribution not positive or not summing to one */
  PBRL_BAD_TRANSITION = 6,        /**< a transition row negative or not summing to one */
  PBRL_BAD_POLICY = 7,            /**< a policy row outside the policy set */
  PBRL_BAD_STEP_SIZE = 8,         /**< a step size not positive and finite */
  PBRL_BAD_SETTING = 9,           /**< another setting out of range (a negative iteration count, ...) */
  PBRL_OUT_OF_BOUNDS = 10,        /**< a parameter outside its box */
  PBRL_NOT_INITIALIZED = 11,      /**< a call on a workspace that no init succeeded on */
  PBRL_NUMERICAL_FAILURE = 12,    /**< a computation produced NaN/inf or a singular system */
  PBRL_BUFFER_TOO_SMALL = 13,     /**< a caller array or buffer shorter than what it must hold */
  PBRL_CHECKPOINT_CORRUPT = 14,   /**< not an intact checkpoint (torn write, erased or damaged flash) */
  PBRL_CHECKPOINT_MISMATCH = 15,  /**< an intact checkpoint of another version, solver, scalar or size */
  PBRL_COUNT_OVERFLOW = 16,       /**< a step would overflow the iteration or environment-step count */
  PBRL_CHECKPOINT_OTHER_PROBLEM = 17,   /**< an intact checkpoint of another kind of problem */
  PBRL_CHECKPOINT_OTHER_MODEL = 18,     /**< an intact checkpoint taken on another model or prior */
  PBRL_CHECKPOINT_OTHER_SETTINGS = 19   /**< an intact checkpoint taken under other settings */
} pbrl_status;

/** The status's name ("ok", "null_pointer", ...), for logs; never null ("unknown" for other values). */
const char* pbrl_status_string(pbrl_status status);

#ifdef __cplusplus
}
#endif

#endif
