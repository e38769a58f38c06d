#pragma once
// Exact policy evaluation of a regularized MDP (paper, Section 2.1, ERRATA item 4): V, Q, the
// discounted state occupancy d and mu(s,a) = d(s) pi(a|s), from one factorization of
// I - gamma*P_pi. Two methods, chosen at compile time because they need different memory:
//   direct: LU without pivoting (S*S scalars; stable because the matrix is strictly diagonally
//           dominant by rows for gamma < 1);
//   sweeps: warm-started fixed-point sweeps with O(S) extra memory, stopping at `tolerance` or at
//           max_sweeps. Stopping at max_sweeps is an outcome, not an error: the call returns ok
//           and says so in the workspace (max_sweeps_hit).
// Formulas and error bounds: docs/algorithm.md#exact-evaluation.

#include "pbrl/core/config.hpp"
#include "pbrl/model/mdp.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>
#include <limits>
#include <utility>

namespace pbrl {

/// How policies are evaluated, chosen at compile time: direct (LU, S*S scalars) or sweeps
/// (warm-started fixed-point sweeps, O(S) memory, capped at max_sweeps).
enum class EvaluationMethod : unsigned char { direct, sweeps };

/// Everything known about one policy on one MDP. Kept by the caller between calls: in sweep
/// mode the previous value and occupancy are the warm start.
template <typename Scalar, int S, int A>
struct Evaluation {
  StateVector<Scalar, S> value = StateVector<Scalar, S>::Zero();                  ///< V^pi(s)
  StateActionMatrix<Scalar, S, A> q = StateActionMatrix<Scalar, S, A>::Zero();    ///< Q^pi(s,a)
  StateVector<Scalar, S> occupancy = StateVector<Scalar, S>::Zero();              ///< d(s)
  Scalar value_rho = Scalar(0);                                                   ///< V^pi(rho)
};

/// The scratch of policy evaluation by Method, owned by the caller (sizeof is its RAM).
template <typename Scalar, int S, EvaluationMethod Method>
struct EvaluationWorkspace;

/// The direct method's workspace: the LU factors of I - gamma*P_pi and the solves' vectors.
template <typename Scalar, int S>
struct EvaluationWorkspace<Scalar, S, EvaluationMethod::direct> {
  /// The method this workspace serves.
  static constexpr EvaluationMethod method = EvaluationMethod::direct;
  Scalar lu[S * S];  ///< the factors; a plain array (mapped): no Eigen fixed-size object limit at large S
  /// @{
  /// Scratch of the solves.
  StateVector<Scalar, S> value, occupancy, rhs;
  /// @}
  const void* factors_of = nullptr;  ///< the Evaluation whose evaluate() made the factors in lu
};

/// The sweeps method's workspace: its settings (max_sweeps, tolerance), its diagnostics and the
/// solves' vectors.
template <typename Scalar, int S>
struct EvaluationWorkspace<Scalar, S, EvaluationMethod::sweeps> {
  /// The method this workspace serves.
  static constexpr EvaluationMethod method = EvaluationMethod::sweeps;
  int max_sweeps = 500;  ///< bound on the work of one solve (>= 1, else the calls return bad_setting)
  /// Stop once a sweep changes no entry by more than this (sup norm; finite, >= 0, else bad_setting).
  Scalar tolerance = std::numeric_limits<Scalar>::epsilon() * Scalar(64);  // sup-norm change
  int last_sweeps = 0;   ///< sweeps the last solve used (diagnostic)
  bool max_sweeps_hit = false;  ///< the last call stopped a solve at max_sweeps, above its tolerance
  std::int64_t max_sweeps_hit_total = 0;  ///< calls that did, since the workspace was made (saturates)
  /// @{
  /// Scratch of the solves.
  StateVector<Scalar, S> value, occupancy, rhs, next;
  /// @}
};

/// Calls through ws that stopped a sweep solve at max_sweeps, since ws was made; a solver's report
/// gives the difference over its step. The direct method has no cap: always 0.
template <typename Scalar, int S, EvaluationMethod M>
std::int64_t max_sweeps_hit_total(const EvaluationWorkspace<Scalar, S, M>& ws) {
  if constexpr (M == EvaluationMethod::sweeps) {
    return ws.max_sweeps_hit_total;
  } else {
    (void)ws;
    return 0;
  }
}

/// Forgets which evaluation the factors ws holds were made for: evaluate_on_chain factors afresh.
/// Solvers call it as a step begins (M(x) is new).
template <typename Scalar, int S, EvaluationMethod M>
void forget_factorization(EvaluationWorkspace<Scalar, S, M>& ws) {
  if constexpr (M == EvaluationMethod::direct) ws.factors_of = nullptr;
  (void)ws;
}

/// The part of every solver's and baseline's step report that its policy evaluations fill.
struct EvaluationOutcome {
  std::int64_t max_sweeps_hit = 0;  ///< evaluations in this step that stopped at max_sweeps (0 with LU)
};

namespace detail {

// c(s) = <pi(s), r(s,.)> - tau*h_s(pi(s)).
template <typename Scalar, int S, int A>
void induced_cost(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                  const StateActionMatrix<Scalar, S, A>* log_pi, StateVector<Scalar, S>& c) {
  const auto r = m.r();
  for (int s = 0; s < S; ++s) {
    c(s) = pi.row(s).dot(r.row(s));
    if (m.tau() > Scalar(0)) c(s) -= m.tau() * m.regularizer.value_from(s, pi.row(s), log_pi);
  }
}

// Up to kUnrolledLuStates states the elimination, the solves and the rows of I - gamma*P_pi are
// loops over compile-time bounds with a row held in registers (see lu_unrolled).
constexpr int kUnrolledLuStates = 16;

// Row i of I - gamma*P_pi into out, each entry written once: gamma*pi(i,a)*P(.|i,a) subtracted from
// 0 in the order a = 0..A-1, then the diagonal entry again from 1 in that order. The same numbers,
// to the bit, as the identity minus A passes over the row. Up to kUnrolledLuStates states the row
// is summed in registers one action at a time, each weight formed once (on the Cortex-M4F about
// 2.5 instructions a multiply-add, against 3.2 for the one Eigen expression below, which keeps
// the A weights in memory and reloads them for every entry); larger rows are that expression, a
// left fold over a, vectorized along the row.
template <typename Scalar, int S, int A, int... a>
void form_row(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi, int i, Scalar* out,
              std::integer_sequence<int, a...>) {
  const Scalar* p = m.transition + i * A * S;  // P(.|i,0); P(.|i,a) is a*S further
  if constexpr (S <= kUnrolledLuStates) {
    const Scalar c0 = m.discount * pi(i, 0);
    Scalar row[S];
#pragma GCC unroll 16
    for (int j = 0; j < S; ++j) row[j] = Scalar(0) - c0 * p[j];
    Scalar d = Scalar(1) - c0 * p[i];
    for (int b = 1; b < A; ++b) {
      const Scalar c = m.discount * pi(i, b);
      const Scalar* pb = p + b * S;
#pragma GCC unroll 16
      for (int j = 0; j < S; ++j) row[j] -= c * pb[j];
      d -= c * pb[i];
    }
#pragma GCC unroll 16
    for (int j = 0; j < S; ++j) out[j] = row[j];
    out[i] = d;
  } else {
    using Row = Eigen::Map<const StateVector<Scalar, S>>;
    Eigen::Map<StateVector<Scalar, S>> row(out);
    row = (StateVector<Scalar, S>::Zero() - ... - ((m.discount * pi(i, a)) * Row(p + a * S)));
    Scalar d(1);
    ((d -= (m.discount * pi(i, a)) * p[a * S + i]), ...);
    out[i] = d;
  }
}

// Elimination by panels of kLuPanel columns (right-looking, blocked). A panel is eliminated column
// by column: its own rows in full (they become rows of U), the rows below it only within the
// panel (their multipliers). The rest below and right of the panel then takes the panel's
// kLuPanel updates at once, a tile at a time held in registers, so it is read and written once
// per panel rather than once per column: that traffic made the column-by-column elimination 1.5
// times slower than Eigen's blocked LU at S = 100 (bench_pbrl). Each entry still takes its
// updates -l(i,k)*u(k,j) one at a time in increasing k and each multiplier is the same quotient,
// so the factors are, to the bit, those of column-by-column elimination. (That one skipped rows
// with a zero multiplier: subtracting 0*u changes nothing either, as no entry is ever -0.)
constexpr int kLuPanel = 4;
// Tiles of 16 entries: 8 SSE2 registers on x86-64, half of a Cortex-M4F's 32 single-precision
// ones. Double tiles are 2 x 8, a tile row being a 64-byte cache line (faster than 4 x 4 on x86-64
// in bench_pbrl); float tiles 4 x 4.
template <typename Scalar>
constexpr int kLuTileRows = sizeof(Scalar) >= 8 ? 2 : 4;

// Columns k0..k1-1 (k1 - k0 <= kLuPanel): rows k0..k1-1 in full, the rows below within the panel.
template <typename Scalar, int S>
void lu_panel(Scalar* lu, int k0, int k1) {
  for (int k = k0; k < k1; ++k) {
    const Scalar* uk = lu + k * S;
    for (int i = k + 1; i < k1; ++i) {
      Scalar* row = lu + i * S;
      const Scalar l = row[k] / uk[k];
      row[k] = l;
      if (l != Scalar(0))
        for (int j = k + 1; j < S; ++j) row[j] -= l * uk[j];
    }
    for (int i = k1; i < S; ++i) {
      Scalar* row = lu + i * S;
      const Scalar l = row[k] / uk[k];
      row[k] = l;
      for (int j = k + 1; j < k1; ++j) row[j] -= l * uk[j];
    }
  }
}

// Rows and columns k1..S-1 take the updates of panel k0..k1-1 (k1 = k0 + kLuPanel), k increasing.
template <typename Scalar, int S>
void lu_trailing(Scalar* lu, int k0) {
  constexpr int R = kLuTileRows<Scalar>, C = 16 / R;
  const int k1 = k0 + kLuPanel;
  // One entry's updates (the edges that do not fill a tile).
  const auto update = [lu, k0, k1](int i, int j) {
    Scalar x = lu[i * S + j];
    for (int k = k0; k < k1; ++k) x -= lu[i * S + k] * lu[k * S + j];
    lu[i * S + j] = x;
  };
  int i = k1;
  for (; i + R <= S; i += R) {
    int j = k1;
    for (; j + C <= S; j += C) {
      Scalar tile[R][C];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) tile[r][c] = lu[(i + r) * S + j + c];
      for (int k = k0; k < k1; ++k)
        for (int r = 0; r < R; ++r) {
          const Scalar l = lu[(i + r) * S + k];
          for (int c = 0; c < C; ++c) tile[r][c] -= l * lu[k * S + j + c];
        }
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) lu[(i + r) * S + j + c] = tile[r][c];
    }
    for (; j < S; ++j)
      for (int r = 0; r < R; ++r) update(i + r, j);
  }
  for (; i < S; ++i)
    for (int j = k1; j < S; ++j) update(i, j);
}

// Up to kUnrolledLuStates states the elimination and the solves are loops over compile-time
// bounds unrolled in full, so the row being eliminated (or the vector being solved for) is held in
// registers: one load and one multiply-add per update instead of a load, a multiply-add and a
// store behind a loop counter (on the Cortex-M4F a 10-state factorization 2,200 -> about 1,000
// instructions, each triangular solve about 620 -> 250). Row i takes its updates -l(i,k)*u(k,j)
// in increasing k, from rows of U already final, with the same quotients: the factors are, to the
// bit where the compiler does not fuse multiply-adds, those of the panels below. Larger models use
// the panels, whose unrolled code would not pay.

template <typename Scalar, int S>
void lu_unrolled(Scalar* lu) {
  for (int i = 1; i < S; ++i) {
    Scalar r[S];
#pragma GCC unroll 16
    for (int j = 0; j < S; ++j) r[j] = lu[i * S + j];
#pragma GCC unroll 16
    for (int k = 0; k < S - 1; ++k) {
      if (k == i) break;
      const Scalar* uk = lu + k * S;
      const Scalar l = r[k] / uk[k];
      r[k] = l;
#pragma GCC unroll 16
      for (int j = k + 1; j < S; ++j) r[j] -= l * uk[j];
    }
#pragma GCC unroll 16
    for (int j = 0; j < S; ++j) lu[i * S + j] = r[j];
  }
}

// Factor I - gamma*P_pi in place (Doolittle, unit lower L below the diagonal, U on and above).
template <typename Scalar, int S, int A>
void factorize(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
               EvaluationWorkspace<Scalar, S, EvaluationMethod::direct>& ws) {
  ws.factors_of = nullptr;
  for (int i = 0; i < S; ++i) form_row(m, pi, i, ws.lu + i * S, std::make_integer_sequence<int, A>{});
  if constexpr (S <= kUnrolledLuStates) {
    lu_unrolled<Scalar, S>(ws.lu);
  } else {
    int k0 = 0;
    for (; k0 + kLuPanel < S; k0 += kLuPanel) {
      lu_panel<Scalar, S>(ws.lu, k0, k0 + kLuPanel);
      lu_trailing<Scalar, S>(ws.lu, k0);
    }
    lu_panel<Scalar, S>(ws.lu, k0, S);
  }
}

// Both solves up to kUnrolledLuStates: x in registers, copied in and out once; each the same sums
// in the same order as the loops of lu_solve and lu_solve_transposed below.
template <bool Transposed, typename Scalar, int S>
void lu_solve_unrolled(const Scalar* lu, StateVector<Scalar, S>& b) {
  Scalar x[S];
#pragma GCC unroll 16
  for (int i = 0; i < S; ++i) x[i] = b(i);
  if constexpr (!Transposed) {
#pragma GCC unroll 16
    for (int i = 1; i < S; ++i) {
      Scalar acc(0);
#pragma GCC unroll 16
      for (int j = 0; j < i; ++j) acc += lu[i * S + j] * x[j];
      x[i] -= acc;
    }
#pragma GCC unroll 16
    for (int i = S - 1; i >= 0; --i) {
      Scalar acc(0);
#pragma GCC unroll 16
      for (int j = i + 1; j < S; ++j) acc += lu[i * S + j] * x[j];
      x[i] = (x[i] - acc) / lu[i * S + i];
    }
  } else {
#pragma GCC unroll 16
    for (int j = 0; j < S; ++j) {
      x[j] /= lu[j * S + j];
#pragma GCC unroll 16
      for (int i = j + 1; i < S; ++i) x[i] -= x[j] * lu[j * S + i];
    }
#pragma GCC unroll 16
    for (int j = S - 1; j > 0; --j)
#pragma GCC unroll 16
      for (int i = 0; i < j; ++i) x[i] -= x[j] * lu[j * S + i];
  }
#pragma GCC unroll 16
  for (int i = 0; i < S; ++i) b(i) = x[i];
}

// Solve (I - gamma*P_pi) x = b in place with the factors. Each b(i) subtracts one sum accumulated
// in increasing j. Above kUnrolledLuStates the forward sums of T rows run side by side (independent
// chains, each in its own order, so the latency of one add per step is shared), the backward ones
// cannot (each row's sum starts with the previous row's result).
// Plain loops: GCC 12 -O2 misreads Eigen's head(i)/tail(n) dots at S = 3 as overflowing.
template <typename Scalar, int S>
void lu_solve(const Scalar* lu, StateVector<Scalar, S>& b) {
  if constexpr (S <= kUnrolledLuStates) {
    lu_solve_unrolled<false>(lu, b);
  } else {
    constexpr int T = 4;
    constexpr int full = S - S % T;  // rows in groups of T
    for (int i0 = 0; i0 < full; i0 += T) {
      Scalar acc[T] = {};
      for (int j = 0; j < i0; ++j)
        for (int r = 0; r < T; ++r) acc[r] += lu[(i0 + r) * S + j] * b(j);
      for (int r = 0; r < T; ++r) {
        for (int j = i0; j < i0 + r; ++j) acc[r] += lu[(i0 + r) * S + j] * b(j);
        b(i0 + r) -= acc[r];
      }
    }
    for (int i = full; i < S; ++i) {
      Scalar acc(0);
      for (int j = 0; j < i; ++j) acc += lu[i * S + j] * b(j);
      b(i) -= acc;
    }
    for (int i = S - 1; i >= 0; --i) {
      Scalar acc(0);
      for (int j = i + 1; j < S; ++j) acc += lu[i * S + j] * b(j);
      b(i) = (b(i) - acc) / lu[i * S + i];
    }
  }
}

// Solve (I - gamma*P_pi)^T x = b in place: U^T z = b, then L^T x = z, row-wise (contiguous).
template <typename Scalar, int S>
void lu_solve_transposed(const Scalar* lu, StateVector<Scalar, S>& b) {
  if constexpr (S <= kUnrolledLuStates) {
    lu_solve_unrolled<true>(lu, b);
  } else {
    const Eigen::Map<const Eigen::Matrix<Scalar, S, S, Eigen::RowMajor>> M(lu);
    for (int j = 0; j < S; ++j) {
      b(j) /= M(j, j);
      const int n = S - 1 - j;
      if (n > 0) b.tail(n).noalias() -= b(j) * M.row(j).tail(n).transpose();
    }
    for (int j = S - 1; j > 0; --j) b.head(j).noalias() -= b(j) * M.row(j).head(j).transpose();
  }
}

// out(s) = sum_a pi(a|s) <P(.|s,a), v>
template <typename Scalar, int S, int A>
void apply_transition(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                      const StateVector<Scalar, S>& v, StateVector<Scalar, S>& out) {
  const auto P = m.P();
  for (int s = 0; s < S; ++s) {
    Scalar acc(0);
    for (int a = 0; a < A; ++a) acc += pi(s, a) * P.row(s * A + a).dot(v);
    out(s) = acc;
  }
}

// out(s') = sum_{s,a} d(s) pi(a|s) P(s'|s,a)
template <typename Scalar, int S, int A, typename Weights>
void apply_transition_transposed(const Mdp<Scalar, S, A>& m,
                                 const StateActionMatrix<Scalar, S, A>& pi,
                                 const Eigen::MatrixBase<Weights>& d, StateVector<Scalar, S>& out) {
  const auto P = m.P();
  out.setZero();
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) {
      const Scalar w = d(s) * pi(s, a);
      if (w != Scalar(0)) out.noalias() += w * P.row(s * A + a).transpose();
    }
}

// Fixed-point sweeps x <- b + gamma*T x (T = P_pi, or its transpose), warm-started from x.
// Returns true when it stopped at max_sweeps with the last change still above the tolerance.
template <bool Transposed, typename Scalar, int S, int A>
bool sweep_solve(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                 const StateVector<Scalar, S>& b,
                 EvaluationWorkspace<Scalar, S, EvaluationMethod::sweeps>& ws,
                 StateVector<Scalar, S>& x) {
  int k = 0;
  bool stopped = false;
  for (; k < ws.max_sweeps; ++k) {
    if (Transposed) apply_transition_transposed(m, pi, x, ws.next);
    else apply_transition(m, pi, x, ws.next);
    ws.next = b + m.discount * ws.next;
    const Scalar change = (ws.next - x).cwiseAbs().maxCoeff();
    x = ws.next;
    if (!(change > ws.tolerance)) {
      ++k;
      stopped = true;
      break;
    }
  }
  ws.last_sweeps = k;
  return !stopped;
}

// One call's outcome (one or two sweep solves): whether a solve stopped at max_sweeps.
template <typename Scalar, int S>
void record_max_sweeps(EvaluationWorkspace<Scalar, S, EvaluationMethod::sweeps>& ws, bool hit) {
  ws.max_sweeps_hit = hit;
  if (hit && ws.max_sweeps_hit_total < std::numeric_limits<std::int64_t>::max()) ++ws.max_sweeps_hit_total;
}

// Q = r + gamma * P V, written into q only when it is certain to be finite: every |r| and |V| at
// most max/4 (then |Q| <= max/2).
// Up to kRowDotStates states, one pass of row dot products with V in a local copy: q's stores
// cannot alias the copy, so the compiler keeps it in registers for every row (on the Cortex-M4F
// about 2 instructions a multiply-add against 5 for Eigen's gemv kernel and a second pass for r).
// Larger models use the gemv kernel, which blocks rows to share the loads of V.
constexpr int kRowDotStates = 16;
template <typename Scalar, int S, int A>
bool write_q(const Mdp<Scalar, S, A>& m, const StateVector<Scalar, S>& v,
             StateActionMatrix<Scalar, S, A>& q) {
  if (!detail::all_finite_times<4>(m.reward, S * A) || !detail::all_finite_times<4>(v.data(), S)) return false;
  if constexpr (S <= kRowDotStates) {
    const StateVector<Scalar, S> local = v;
    const Scalar gamma = m.discount;  // a local too: q's stores could alias m.discount
    Scalar* out = q.data();
    for (int i = 0; i < S * A; ++i) out[i] = m.reward[i] + gamma * detail::row_dot(m.transition + i * S, local);
  } else {
    Eigen::Map<Vector<Scalar, S * A>> flat(q.data());
    flat.noalias() = m.P() * v;
    flat = Eigen::Map<const Vector<Scalar, S * A>>(m.reward) + m.discount * flat;
  }
  return true;
}

// The O(1) part of validate(m): what every call checks before it reads the model.
template <typename Scalar, int S, int A>
Status check_model(const Mdp<Scalar, S, A>& m) {
  if (m.reward == nullptr || m.transition == nullptr || m.initial == nullptr) return Status::null_pointer;
  if (Status st = validate_discount(m.discount); st != Status::ok) return st;
  if (!std::isfinite(m.tau()) || m.tau() < Scalar(0)) return Status::bad_regularization;
  if (m.regularizer.kind == RegularizerKind::kl_reference && m.regularizer.reference == nullptr)
    return Status::null_pointer;
  if (m.regularizer.kind != RegularizerKind::entropy && m.regularizer.kind != RegularizerKind::kl_reference)
    return Status::bad_regularization;
  return Status::ok;
}

template <typename Scalar, int S, EvaluationMethod M>
Status check_workspace(const EvaluationWorkspace<Scalar, S, M>& ws) {
  if constexpr (M == EvaluationMethod::sweeps) {
    if (ws.max_sweeps < 1 || !std::isfinite(ws.tolerance) || ws.tolerance < Scalar(0))
      return Status::bad_setting;
  }
  (void)ws;
  return Status::ok;
}

// Per-call checks are O(S*A); the full model is checked once by validate(mdp).
template <typename Scalar, int S, int A, EvaluationMethod M>
Status check_call(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                  const EvaluationWorkspace<Scalar, S, M>& ws) {
  if (Status st = check_model(m); st != Status::ok) return st;
  if (Status st = check_workspace(ws); st != Status::ok) return st;
  return validate_policy(pi);
}

template <typename Scalar, int S, int A>
Status check_call(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi) {
  if (Status st = check_model(m); st != Status::ok) return st;
  return validate_policy(pi);
}

// Value and occupancy into the workspace (ws.value warm-starts sweeps from `previous`).
template <typename Scalar, int S, int A, EvaluationMethod M>
void solve_value_and_occupancy(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                               const StateActionMatrix<Scalar, S, A>* log_pi,
                               const Evaluation<Scalar, S, A>& previous,
                               EvaluationWorkspace<Scalar, S, M>& ws) {
  induced_cost(m, pi, log_pi, ws.rhs);
  if constexpr (M == EvaluationMethod::direct) {
    factorize(m, pi, ws);
    ws.value = ws.rhs;
    lu_solve<Scalar, S>(ws.lu, ws.value);
    ws.occupancy = m.rho();
    lu_solve_transposed<Scalar, S>(ws.lu, ws.occupancy);
  } else {
    ws.value = previous.value;
    const bool value_hit = sweep_solve<false>(m, pi, ws.rhs, ws, ws.value);
    const int value_sweeps = ws.last_sweeps;
    ws.rhs = m.rho();
    ws.occupancy = previous.occupancy;
    const bool occupancy_hit = sweep_solve<true>(m, pi, ws.rhs, ws, ws.occupancy);
    if (value_sweeps > ws.last_sweeps) ws.last_sweeps = value_sweeps;
    record_max_sweeps(ws, value_hit || occupancy_hit);
  }
}

// evaluate() after its input checks.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status evaluate_checked(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                        EvaluationWorkspace<Scalar, S, M>& ws, Evaluation<Scalar, S, A>& out,
                        const StateActionMatrix<Scalar, S, A>* log_pi, bool with_q) {
  if (M == EvaluationMethod::sweeps && (!pbrl::all_finite(out.value) || !pbrl::all_finite(out.occupancy)))
    return Status::not_finite;  // the warm start
  solve_value_and_occupancy(m, pi, log_pi, out, ws);
  if (!pbrl::all_finite(ws.value) || !pbrl::all_finite(ws.occupancy)) return Status::numerical_failure;
  if (with_q && !write_q(m, ws.value, out.q)) return Status::numerical_failure;
  out.value = ws.value;
  out.occupancy = ws.occupancy;
  out.value_rho = m.rho().dot(out.value);
  if constexpr (M == EvaluationMethod::direct) ws.factors_of = &out;
  return Status::ok;
}

}  // namespace detail

/// V, Q, d and V(rho) of policy pi (rows are distributions) on MDP m, into out.
/// m must have passed validate(m) once; this call checks pi and the cheap model settings.
/// @param m       the MDP (validated once)
/// @param pi      the policy, rows distributions
/// @param ws      the workspace (scratch; sweeps: its settings and diagnostics)
/// @param out     the result; in sweep mode its value and occupancy are the warm start
/// @param log_pi  log pi entrywise (finite; entries where pi is 0 are not read), as the oracles
///                keep it beside pi, so the regularizer's h is formed without taking S*A logs;
///                nullptr: taken here
/// @param with_q  false leaves out.q as it was and forms V, d and V(rho) alone, the same numbers:
///                for a policy whose Q nothing reads, S*A*S multiply-adds fewer
/// @return ok; null_pointer, bad_discount or bad_regularization (the model's settings);
///         bad_setting (the sweeps settings); not_finite or bad_policy (pi, log_pi, the warm
///         start); numerical_failure. On error out is unchanged (ws is scratch). Stopping at
///         max_sweeps is not an error: ws.max_sweeps_hit says so.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status evaluate(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                EvaluationWorkspace<Scalar, S, M>& ws, Evaluation<Scalar, S, A>& out,
                const StateActionMatrix<Scalar, S, A>* log_pi = nullptr, bool with_q = true) {
  if (Status st = detail::check_call(m, pi, ws); st != Status::ok) return st;
  if (log_pi != nullptr && !all_finite(*log_pi)) return Status::not_finite;
  return detail::evaluate_checked(m, pi, ws, out, log_pi, with_q);
}

namespace detail {
// evaluate() for a policy the calling solver or problem formed itself from inputs it checked:
// an oracle's output (oracle_step checks it), a solver's pi_y of its projected parameters, the
// joint policy of two checked policies. Their O(S*A) checks (rows are distributions, logs finite)
// are left out; the model's settings, the workspace and every output are checked as evaluate()
// checks them, and the numbers are evaluate()'s.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status evaluate_formed_policy(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                              EvaluationWorkspace<Scalar, S, M>& ws, Evaluation<Scalar, S, A>& out,
                              const StateActionMatrix<Scalar, S, A>* log_pi = nullptr, bool with_q = true) {
  if (Status st = check_model(m); st != Status::ok) return st;
  if (Status st = check_workspace(ws); st != Status::ok) return st;
  return evaluate_checked(m, pi, ws, out, log_pi, with_q);
}
}  // namespace detail

/// evaluate(m, pi, ws, out) reusing the factors of `chain`, pi's evaluation on an MDP with the
/// same transition, initial distribution and discount (only the reward or the regularizer
/// differs, as the upper level's MDP shares the lower level's chain).
/// If chain was made by the last factorization through ws, d is chain's and V is solved with its
/// factors (two triangular solves, no factorization): the numbers evaluate() gives, to the bit.
/// Otherwise (ws factored since, sweeps) it is evaluate(). The caller guarantees that pi and the
/// transition are unchanged since chain was made.
/// @return evaluate()'s statuses; on error out is unchanged.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status evaluate_on_chain(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                         EvaluationWorkspace<Scalar, S, M>& ws, const Evaluation<Scalar, S, A>& chain,
                         Evaluation<Scalar, S, A>& out) {
  if constexpr (M == EvaluationMethod::direct) {
    if (ws.factors_of == &chain && &chain != &out) {
      if (Status st = detail::check_call(m, pi, ws); st != Status::ok) return st;
      detail::induced_cost(m, pi, static_cast<const StateActionMatrix<Scalar, S, A>*>(nullptr), ws.value);
      detail::lu_solve<Scalar, S>(ws.lu, ws.value);
      if (!all_finite(ws.value)) return Status::numerical_failure;
      if (!detail::write_q(m, ws.value, out.q)) return Status::numerical_failure;
      out.value = ws.value;
      out.occupancy = chain.occupancy;
      out.value_rho = m.rho().dot(out.value);
      return Status::ok;
    }
  }
  return evaluate(m, pi, ws, out);
}

namespace detail {

// ws.occupancy = the solution d' of (I - gamma*P_pi^T) d' = ws.rhs on m's chain under pi: direct,
// with the factorization of (m, pi) (reused when factors_current: made by the last evaluate(m, pi,
// ws, ...)); sweeps, warm-started from warm. Then warm = d', or numerical_failure (warm
// unchanged) when d' is not finite.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status solve_occupancy(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                       EvaluationWorkspace<Scalar, S, M>& ws, StateVector<Scalar, S>& warm, bool factors_current) {
  if constexpr (M == EvaluationMethod::direct) {
    if (!factors_current) factorize(m, pi, ws);
    ws.occupancy = ws.rhs;
    lu_solve_transposed<Scalar, S>(ws.lu, ws.occupancy);
  } else {
    (void)factors_current;
    ws.occupancy = warm;
    record_max_sweeps(ws, sweep_solve<true>(m, pi, ws.rhs, ws, ws.occupancy));
  }
  if (!pbrl::all_finite(ws.occupancy)) return Status::numerical_failure;
  warm = ws.occupancy;
  return Status::ok;
}

}  // namespace detail

/// State-action occupancy of trajectories that start with s_0 ~ rho, a_0 ~ sigma(s_0) and follow
/// pi afterwards (policy = {sigma, pi}): mu'(s,a) = rho(s) sigma(a|s) + m(s) pi(a|s), with
/// (I - gamma*P_pi^T) m = gamma * sum_{s,a} rho(s) sigma(a|s) P(.|s,a).
/// The Bellman penalty uses it with sigma = pi_y and pi = the oracle's policy.
/// `warm` is the state part m, kept by the caller (warm start of sweeps). Pass
/// factors_current = true only right after evaluate(m, pi, ws, ...) with the same m and pi:
/// the direct method then reuses that factorization instead of computing it again.
/// @return ok; evaluate()'s statuses for m, pi and ws; not_finite or bad_policy (sigma, warm);
///         numerical_failure. On error warm and mu are unchanged.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status occupancy_from_start(const Mdp<Scalar, S, A>& m, SwitchingPolicy<Scalar, S, A> policy,
                            EvaluationWorkspace<Scalar, S, M>& ws, StateVector<Scalar, S>& warm,
                            StateActionMatrix<Scalar, S, A>& mu, bool factors_current = false) {
  const StateActionMatrix<Scalar, S, A>& sigma = policy.sigma;
  const StateActionMatrix<Scalar, S, A>& pi = policy.pi;
  if (Status st = detail::check_call(m, pi, ws); st != Status::ok) return st;
  if (Status st = validate_policy(sigma); st != Status::ok) return st;
  if (!all_finite(warm)) return Status::not_finite;
  const auto rho = m.rho();
  detail::apply_transition_transposed(m, sigma, rho, ws.rhs);
  ws.rhs *= m.discount;
  if (Status st = detail::solve_occupancy(m, pi, ws, warm, factors_current); st != Status::ok) return st;
  for (int s = 0; s < S; ++s) mu.row(s) = rho(s) * sigma.row(s) + ws.occupancy(s) * pi.row(s);
  return Status::ok;
}

/// Policy gradient of V^pi(rho) in direct coordinates (paper, eq. "rpg direct param"):
/// d V(rho) / d pi(a|s) = d(s) * (Q(s,a) - tau * dh_s/dpi(a|s)), from pi's evaluation `eval`.
/// Chain to softmax logits with chain_policy_gradient(). log_pi as evaluate()'s (the caller has
/// checked it), or nullptr.
template <typename Scalar, int S, int A>
void policy_gradient(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                     const Evaluation<Scalar, S, A>& eval, StateActionMatrix<Scalar, S, A>& grad,
                     const StateActionMatrix<Scalar, S, A>* log_pi = nullptr) {
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) {
      Scalar g = eval.q(s, a);
      if (m.tau() > Scalar(0)) g -= m.tau() * m.regularizer.derivative_from(s, a, pi, log_pi);
      grad(s, a) = eval.occupancy(s) * g;
    }
}

/// mu(s,a) = d(s) pi(a|s), the weights of J^T for grad_x V^pi(rho).
template <typename Scalar, int S, int A>
void state_action_occupancy(const Evaluation<Scalar, S, A>& eval,
                            const StateActionMatrix<Scalar, S, A>& pi,
                            StateActionMatrix<Scalar, S, A>& mu) {
  mu = eval.occupancy.asDiagonal() * pi;
}

/// An evaluation's warm start kept apart (a checkpoint encodes it as an Evaluation's: value, then
/// occupancy).
/// A solver keeps its last completed step's here while a step in progress overwrites its
/// evaluations, so that an image saved between a step's slices is the last completed step's.
/// S = 0 where nothing is kept (direct mode).
template <typename Scalar, int S>
struct EvaluationWarmStart {
  /// The kept V.
  Eigen::Matrix<Scalar, S, 1> value = Eigen::Matrix<Scalar, S, 1>::Zero();
  /// The kept d.
  Eigen::Matrix<Scalar, S, 1> occupancy = Eigen::Matrix<Scalar, S, 1>::Zero();

  /// Keeps e's value and occupancy (a step committed).
  template <int A>
  void keep(const Evaluation<Scalar, S, A>& e) {
    value = e.value;
    occupancy = e.occupancy;
  }
  /// Puts the kept value and occupancy back into e (a step in progress abandoned).
  template <int A>
  void put_back(Evaluation<Scalar, S, A>& e) const {
    e.value = value;
    e.occupancy = occupancy;
  }
};

}  // namespace pbrl
