#pragma once
// A stand-in for the real world of a device that adapts its upper-level variable x to transitions
// it observes (examples/adaptation, docs/adaptation.md). The world holds the TRUE model, which the
// device does not know, makes the lower level act on it, and hands out observed transitions
// (s, a1, a2, s'); it also scores the device's x honestly.
//
//   Problem = pbrl::Stackelberg<Scalar, S, A_l, A_f>: a1 = the leader's action, drawn from its
//     policy softmax(x); a2 = the follower's, drawn from its entropy-regularized best response
//     pi*(x) on the TRUE model (soft value iteration: value_at_best_response's ws.optimum.pi).
//   Problem = pbrl::IncentiveDesign<Scalar, S, A1, A2>: a1, a2 drawn from the regularized Nash
//     equilibrium of the TRUE game under incentive x (value_at_best_response's ws.nash.pi1, pi2).
//     The designer's own model (P_id, r_id) is part of its objective, not of the world: only the
//     agents' P is the world's.
//
// The chain: s_0 ~ rho; after each transition the next state is s' with probability 1 - restart,
// else a fresh draw from rho. With restart = 1 - gamma (the default) the states are visited in
// proportion to the normalized discounted occupancy of the lower level's play, (1 - gamma) d_rho:
// the states the bilevel objective weighs are the ones the device sees most.
//
// Response rule: the lower level plays its exact response to the x it last took up. The world
// takes up the device's x at an observation whose index (0, 1, 2, ...) is a multiple of
// respond_every, if x differs from the x taken up before (entry by entry); and at the drift, on
// the new model. Each take-up is one value_at_best_response call (soft value iteration, or the
// Nash solve, warm-started from the last one).
//
// Drift: with second_transition given, the TRUE model's transition array becomes that one at
// observation drift_at (the observation with that index is the first drawn from it).
//
// The honest metric, value_at(x): the upper level's value at the exact lower-level solution of the
// current TRUE model under x (value_at_best_response: the leader's V_l^{pi_x, pi*(x)}(rho), the
// designer's V_id^{pi_NE(x)}(rho)).
//
// Header-only, no heap, no exceptions, no I/O: a firmware can hold a World as a static. The
// caller's arrays (the TRUE model's, flash on a device) are read in place and must outlive it.
// Memory: about the problem's BilevelValueWorkspace plus 2 policies and one x.

#include "pbrl/oracle/bilevel_value.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/stackelberg.hpp"
#include "pbrl/core/rng.hpp"
#include "pbrl/sampling/rollouts.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>

namespace adaptation {

// The two players of a problem kind and where their policies are after value_at_best_response.
template <class Problem>
struct Players;

template <typename Scalar, int S, int AL, int AF>
struct Players<pbrl::Stackelberg<Scalar, S, AL, AF>> {
  using Problem = pbrl::Stackelberg<Scalar, S, AL, AF>;
  static constexpr int kActions1 = AL;  // the leader
  static constexpr int kActions2 = AF;  // the follower
  // pi1 = softmax(x), pi2 = pi*(x) of the model ws was last solved on (at x).
  static pbrl::Status policies(const Problem& p, const typename Problem::Params& x,
                               const typename Problem::BilevelValueWorkspace& ws,
                               pbrl::StateActionMatrix<Scalar, S, AL>& pi1, pbrl::StateActionMatrix<Scalar, S, AF>& pi2) {
    if (pbrl::Status st = p.leader_policy(x, pi1); st != pbrl::Status::ok) return st;
    pi2 = ws.optimum.pi;
    return pbrl::Status::ok;
  }
};

template <typename Scalar, int S, int A1, int A2>
struct Players<pbrl::IncentiveDesign<Scalar, S, A1, A2>> {
  using Problem = pbrl::IncentiveDesign<Scalar, S, A1, A2>;
  static constexpr int kActions1 = A1;
  static constexpr int kActions2 = A2;
  // The regularized Nash equilibrium ws was last solved for (at x).
  static pbrl::Status policies(const Problem&, const typename Problem::Params&,
                               const typename Problem::BilevelValueWorkspace& ws,
                               pbrl::StateActionMatrix<Scalar, S, A1>& pi1, pbrl::StateActionMatrix<Scalar, S, A2>& pi2) {
    pi1 = ws.nash.pi1;
    pi2 = ws.nash.pi2;
    return pbrl::Status::ok;
  }
};

template <typename Scalar>
struct WorldSettings {
  std::int64_t drift_at = 0;           // index of the first observation of the second model (with one)
  Scalar restart = Scalar(-1);         // probability of a restart from rho after a transition, in [0, 1];
                                       // < 0: 1 - gamma
  std::int64_t respond_every = 1;      // the lower level may take up a new x every so many observations (>= 1)
  std::uint32_t seed = 1u;             // the world's own random stream
  pbrl::BestResponseSettings<Scalar> best_response{};  // the exact lower-level solutions' caps and tolerance
};

// One observed transition: in state `state` the players took action1, action2 and the world moved
// to next_state. The joint row is ((state*A1 + action1)*A2 + action2), as the problem's arrays.
struct Observation {
  int state = 0, action1 = 0, action2 = 0, next_state = 0;
};

template <class Problem>
class World {
 public:
  using Scalar = typename Problem::Scalar;
  using Params = typename Problem::Params;
  using Data = typename Problem::Data;
  using Workspace = typename Problem::BilevelValueWorkspace;
  static constexpr int S = Problem::kStates;
  static constexpr int A1 = Players<Problem>::kActions1;
  static constexpr int A2 = Players<Problem>::kActions2;
  using Policy1 = pbrl::StateActionMatrix<Scalar, S, A1>;
  using Policy2 = pbrl::StateActionMatrix<Scalar, S, A2>;

  // data: the TRUE model (data.transition the first TRUE transition array); second_transition: the
  // model after the drift (nullptr: no drift), same layout; x0: the x the lower level first responds
  // to. Validates everything (the second model as the problem validates a model), then computes the
  // first response in place (no workspace copy on the stack); on error the world is not initialized.
  pbrl::Status init(const Data& data, const Scalar* second_transition, const WorldSettings<Scalar>& settings,
                    const Params& x0) {
    initialized_ = false;
    if (settings.respond_every < 1 || settings.drift_at < 0) return pbrl::Status::bad_setting;
    if (!(settings.restart <= Scalar(1))) return pbrl::Status::bad_setting;  // NaN too
    if (pbrl::Status st = pbrl::validate(settings.best_response); st != pbrl::Status::ok) return st;
    if (second_transition != nullptr) {
      Data second = data;
      second.transition = second_transition;
      if (pbrl::Status st = problem_.init(second); st != pbrl::Status::ok) return st;
    }
    if (pbrl::Status st = problem_.init(data); st != pbrl::Status::ok) return st;
    ws_.settings = settings.best_response;  // the warm starts stay: any start converges
    data_ = data;
    second_ = second_transition;
    settings_ = settings;
    restart_ = settings.restart >= Scalar(0) ? settings.restart : Scalar(1) - data.discount;
    observations_ = responses_ = uncertified_ = 0;
    drifted_ = false;
    if (pbrl::Status st = take_up(problem_, x0); st != pbrl::Status::ok) return st;
    rng_.reseed(settings.seed);
    state_ = draw_initial();
    initialized_ = true;
    return pbrl::Status::ok;
  }

  // The next observed transition, the lower level responding to the device's current x (the
  // response rule above). On error (x refused, a response not computed) nothing changed.
  pbrl::Status observe(const Params& x, Observation& out) {
    if (!initialized_) return pbrl::Status::not_initialized;
    if (second_ != nullptr && !drifted_ && observations_ == settings_.drift_at) {
      Data second = data_;
      second.transition = second_;
      Problem problem;
      if (pbrl::Status st = problem.init(second); st != pbrl::Status::ok) return st;
      const Params& next_x = observations_ % settings_.respond_every == 0 ? x : x_;
      if (pbrl::Status st = take_up(problem, next_x); st != pbrl::Status::ok) return st;
      problem_ = problem;
      data_ = second;
      drifted_ = true;
    } else if (observations_ % settings_.respond_every == 0 && x != x_) {
      if (pbrl::Status st = take_up(problem_, x); st != pbrl::Status::ok) return st;
    }
    const int s = state_;
    const int a1 = pbrl::sample_index(rng_, pi1_.row(s));
    const int a2 = pbrl::sample_index(rng_, pi2_.row(s));
    const int row = (s * A1 + a1) * A2 + a2;
    const Eigen::Map<const pbrl::Vector<Scalar, S>> next(data_.transition + row * S);
    const int s_next = pbrl::sample_index(rng_, next);
    if (a1 < 0 || a2 < 0 || s_next < 0) return pbrl::Status::numerical_failure;  // a row without mass
    out = Observation{s, a1, a2, s_next};
    state_ = rng_.uniform<Scalar>() < restart_ ? draw_initial() : s_next;
    ++observations_;
    return pbrl::Status::ok;
  }

  // The honest metric: the upper level's value at the exact lower-level solution of the current
  // TRUE model under x. Uses the world's workspace as scratch (the response being played is kept).
  pbrl::Status value_at(const Params& x, pbrl::BestResponseValue<Scalar>& out) {
    if (!initialized_) return pbrl::Status::not_initialized;
    return problem_.value_at_best_response(x, ws_, out);
  }

  std::int64_t observations() const { return observations_; }
  std::int64_t responses() const { return responses_; }  // value_at_best_response calls of the response rule
  // Responses whose lower-level certificate missed settings.best_response.tolerance (played anyway).
  std::int64_t uncertified_responses() const { return uncertified_; }
  bool drifted() const { return drifted_; }
  const Problem& problem() const { return problem_; }  // on the current TRUE model
  const Data& data() const { return data_; }
  const Params& responding_to() const { return x_; }
  const Policy1& policy1() const { return pi1_; }
  const Policy2& policy2() const { return pi2_; }

 private:
  pbrl::Status respond(const Problem& problem, const Params& x, Workspace& ws, Policy1& pi1, Policy2& pi2) {
    pbrl::BestResponseValue<Scalar> value;
    if (pbrl::Status st = problem.value_at_best_response(x, ws, value); st != pbrl::Status::ok) return st;
    if (!value.converged) ++uncertified_;
    return Players<Problem>::policies(problem, x, ws, pi1, pi2);
  }

  pbrl::Status take_up(const Problem& problem, const Params& x) {
    Policy1 pi1;
    Policy2 pi2;
    if (pbrl::Status st = respond(problem, x, ws_, pi1, pi2); st != pbrl::Status::ok) return st;
    pi1_ = pi1;
    pi2_ = pi2;
    x_ = x;
    ++responses_;
    return pbrl::Status::ok;
  }

  int draw_initial() {
    const Eigen::Map<const pbrl::Vector<Scalar, S>> rho(data_.initial);
    const int s = pbrl::sample_index(rng_, rho);
    return s < 0 ? 0 : s;  // rho > 0 (validated)
  }

  Problem problem_{};
  Workspace ws_{};
  Policy1 pi1_ = Policy1::Zero();
  Policy2 pi2_ = Policy2::Zero();
  Params x_ = Params::Zero();
  Data data_{};
  const Scalar* second_ = nullptr;
  WorldSettings<Scalar> settings_{};
  Scalar restart_ = Scalar(0);
  pbrl::Rng rng_{1u};
  int state_ = 0;
  std::int64_t observations_ = 0, responses_ = 0, uncertified_ = 0;
  bool drifted_ = false, initialized_ = false;
};

}  // namespace adaptation
