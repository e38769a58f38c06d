#pragma once
// RLHF (problems/rlhf.hpp): the optimal regularized policy of the hidden true reward, the
// experiment's upper bound.

#include "pbrl/model/mdp.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"
#include "pbrl/core/status.hpp"

namespace pbrl {

/// Soft value iteration on the true MDP truth = {S, A, r_true, P, tau*h}: the best any learner can
/// do, the upper-bound curve of the experiment (the paper's A2C-on-true-reward "oracle"). The caller
/// chooses the regularization the true return is measured with (tau = 0: the plain optimum).
/// The object holds the result and its own scratch (caller-owned, about 8*S*A scalars).
template <typename Scalar, int S, int A>
class RlhfOracle {
 public:
  /// Policies and Q, S x A.
  using Matrix = StateActionMatrix<Scalar, S, A>;

  /// Solves the true MDP: warm-started from value() (zero at construction); at most
  /// max_iterations sweeps, stopping once the sup-norm change is <= tolerance. The true MDP is
  /// validated in full.
  /// @return ok; validate(truth)'s statuses; bad_setting (max_iterations < 1, tolerance not
  ///         >= 0); soft_value_iteration()'s statuses; numerical_failure. On error the previous
  ///         result is unchanged.
  Status solve(const Mdp<Scalar, S, A>& truth, int max_iterations, Scalar tolerance) {
    if (Status st = validate(truth); st != Status::ok) return st;
    if (max_iterations < 1 || !(tolerance >= Scalar(0))) return Status::bad_setting;
    value_next_ = value_;
    SoftValueIterationResult<Scalar> result;
    if (Status st = soft_value_iteration(truth, max_iterations, tolerance, value_next_, q_next_,
                                         {log_pi_next_, pi_next_}, &result);
        st != Status::ok)
      return st;
    const Scalar value_rho = truth.rho().dot(value_next_);
    if (!std::isfinite(value_rho) || !all_finite(pi_next_) || !all_finite(q_next_))
      return Status::numerical_failure;
    value_ = value_next_;
    q_ = q_next_;
    log_pi_ = log_pi_next_;
    pi_ = pi_next_;
    value_rho_ = value_rho;
    result_ = result;
    return Status::ok;
  }

  /// V* of the last successful solve().
  const StateVector<Scalar, S>& value() const { return value_; }
  /// Q* of the last successful solve().
  const Matrix& q() const { return q_; }
  /// log pi* of the last successful solve().
  const Matrix& log_pi() const { return log_pi_; }
  /// pi* of the last successful solve().
  const Matrix& policy() const { return pi_; }
  /// V*(rho): the upper bound.
  Scalar value_rho() const { return value_rho_; }
  /// The last successful solve()'s sweeps and convergence.
  const SoftValueIterationResult<Scalar>& result() const { return result_; }

 private:
  StateVector<Scalar, S> value_ = StateVector<Scalar, S>::Zero();
  Matrix q_ = Matrix::Zero(), log_pi_ = Matrix::Zero(), pi_ = Matrix::Zero();
  Scalar value_rho_ = Scalar(0);
  SoftValueIterationResult<Scalar> result_{};
  StateVector<Scalar, S> value_next_ = StateVector<Scalar, S>::Zero();
  Matrix q_next_ = Matrix::Zero(), log_pi_next_ = Matrix::Zero(), pi_next_ = Matrix::Zero();
};

}  // namespace pbrl
