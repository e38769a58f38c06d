/* What every generated C interface (<name>.h, written by pbrl-codegen) shares: the status codes,
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

/* PBRL_C_ALIGNAS(n) before a struct member: the member (and so the struct) is n-byte aligned,
 * whether the header is read as C11, C++ or GNU C99. */
#if defined(__cplusplus)
#define PBRL_C_ALIGNAS(n) alignas(n)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define PBRL_C_ALIGNAS(n) _Alignas(n)
#elif defined(__GNUC__)
#define PBRL_C_ALIGNAS(n) __attribute__((aligned(n)))
#else
#error "pbrl C interfaces need C11, C++11 or a GNU C compiler (an alignment specifier)"
#endif

#endif
