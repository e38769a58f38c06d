#pragma once
// Game fixtures shared by the suites: random agents' games and designer models, random games'
// arrays (game_arrays.hpp), a game problem whose x enters rewards and transitions, and the joint
// value.
#include "support.hpp"
#include "game_arrays.hpp"

#include "pbrl/model/game.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/stackelberg.hpp"


template <int S, int A1, int A2>
using GameT = pbrl::MarkovGame<Real, S, A1, A2>;
template <int S, int A1, int A2>
using JointT = pbrl::JointMatrix<Real, S, A1, A2>;
template <int S>
using WsT = pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>;

// Random agents' game and designer model, arrays in the object (std::make_unique for big ones):
// IncentiveArrays drawn from `seed`, then the designer's cost.
template <int S, int A1, int A2>
struct GameData : IncentiveArrays<Real, S, A1, A2> {
  static constexpr int J = A1 * A2;
  Real cost[S];

  explicit GameData(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    this->draw(rng);
    pbrl::random_reward(rng, cost, S);
  }

  GameT<S, A1, A2> game(Real gamma, Real tau) const {
    GameT<S, A1, A2> g{this->reward, this->transition, this->initial, gamma, {}, {}};
    g.regularizer1.tau = tau;
    g.regularizer2.tau = tau;
    return g;
  }

  typename pbrl::IncentiveDesign<Real, S, A1, A2>::Data incentive(Real gamma, Real tau, bool with_cost = false) const {
    typename pbrl::IncentiveDesign<Real, S, A1, A2>::Data d = this->data();
    d.discount = gamma;
    d.regularizer1.tau = tau;
    d.regularizer2.tau = tau;
    d.designer_cost = with_cost ? cost : nullptr;
    return d;
  }
};

// A game problem whose x enters the reward and the transitions, over joint actions j:
//   r_x(s,j) = r(s,j) + tanh(<B(s,j), x>),
//   P_x(.|s,j) = (1 - sig(<C(s,j), x>)) P0(.|s,j) + sig(<C(s,j), x>) P1(.|s,j).
// build(), vjp() and the per-sample sample_vjp(), written out by hand; build() keeps the
// x-dependent factors tanh(<B, x>) and sig(<C, x>) in the model for the other two.
template <int S, int A1, int A2, int K>
class MixtureGame {
 public:
  using Scalar = Real;
  static constexpr int kStates = S, kActions1 = A1, kActions2 = A2, kParams = K, J = A1 * A2;
  using Params = pbrl::Vector<Real, K>;
  struct Model {
    Real reward[S * J];
    Real transition[S * J * S];
    Real tanh[S * J];  // tanh(<B(s,j), x>)
    Real mix[S * J];   // sig(<C(s,j), x>)
  };

  explicit MixtureGame(std::uint32_t seed, Real gamma = Real(0.8), Real tau = Real(0.3)) : gamma_(gamma), tau_(tau) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward_, S * J);
    pbrl::random_transition(rng, p0_, S * J, S);
    pbrl::random_transition(rng, p1_, S * J, S);
    pbrl::random_distribution(rng, initial_, S);
    draw_mixture_coefficients(rng, b_, c_);
  }

  Real linear(const Real* coef, int sj, const Params& x) const {
    Real t(0);
    for (int k = 0; k < K; ++k) t += coef[sj * K + k] * x(k);
    return t;
  }
  pbrl::Status validate_parameters(const Params& x) const {
    return pbrl::contains(box_, x) ? pbrl::Status::ok : pbrl::Status::out_of_bounds;
  }
  void project_parameters(Params& x) const { pbrl::project(box_, x); }

  pbrl::Status build(const Params& x, Model& model, GameT<S, A1, A2>& game) const {
    if (auto st = validate_parameters(x); st != pbrl::Status::ok) return st;
    for (int sj = 0; sj < S * J; ++sj) {
      model.tanh[sj] = std::tanh(linear(b_, sj, x));
      model.reward[sj] = reward_[sj] + model.tanh[sj];
      const Real m = Real(1) / (Real(1) + std::exp(-linear(c_, sj, x)));
      model.mix[sj] = m;
      for (int t = 0; t < S; ++t)
        model.transition[sj * S + t] = (Real(1) - m) * p0_[sj * S + t] + m * p1_[sj * S + t];
    }
    game = GameT<S, A1, A2>{model.reward, model.transition, initial_, gamma_, {}, {}};
    game.regularizer1.tau = tau_;
    game.regularizer2.tau = tau_;
    return pbrl::Status::ok;
  }

  void vjp(const Model& model, const JointT<S, A1, A2>& w, const Vec<S>& v, Real scale, Params& grad) const {
    for (int sj = 0; sj < S * J; ++sj) {
      const Real wsj = w(sj / J, sj % J);
      const Real t = model.tanh[sj];
      const Real m = model.mix[sj];
      Real dv(0);
      for (int u = 0; u < S; ++u) dv += (p1_[sj * S + u] - p0_[sj * S + u]) * v(u);
      for (int k = 0; k < K; ++k)
        grad(k) += scale * wsj *
                   ((Real(1) - t * t) * b_[sj * K + k] + gamma_ * m * (Real(1) - m) * c_[sj * K + k] * dv);
    }
  }

  // Per-sample hook (problem.hpp) over joint actions j:
  // grad += rw * grad r_x(s,j) + tw * grad log P_x(s'|s,j).
  void sample_vjp(const Model& model, const pbrl::VjpSample<Real>& sample, Params& grad) const {
    const auto [s, j, s_next, rw, tw] = sample;
    const int sj = s * J + j;
    const Real t = model.tanh[sj];
    const Real m = model.mix[sj];
    const Real p0 = p0_[sj * S + s_next], p1 = p1_[sj * S + s_next];
    const Real dlog = m * (Real(1) - m) * (p1 - p0) / ((Real(1) - m) * p0 + m * p1);
    const Real dr = rw * (Real(1) - t * t), dp = tw * dlog;
    for (int k = 0; k < K; ++k) grad(k) += dr * b_[sj * K + k] + dp * c_[sj * K + k];
  }

 private:
  Real reward_[S * J], p0_[S * J * S], p1_[S * J * S], initial_[S], b_[S * J * K], c_[S * J * K];
  Real gamma_, tau_;
  pbrl::Box<Real> box_{Real(-2), Real(2)};
};

// V^{pi1,pi2} by one solve on the joint chain with the per-state reward shift
// -tau*h1(pi1(s)) + tau*h2(pi2(s)): independent of the induced MDPs.
template <int S, int A1, int A2>
Vec<S> joint_value(const GameT<S, A1, A2>& g, const Mat<S, A1>& pi1, const Mat<S, A2>& pi2) {
  constexpr int J = A1 * A2;
  struct Storage {
    Real reward[S * J];
    JointT<S, A1, A2> pi;
    WsT<S> ws;
    pbrl::Evaluation<Real, S, J> eval;
  };
  auto st = std::make_unique<Storage>();
  for (int s = 0; s < S; ++s) {
    const Real shift = -g.tau() * g.regularizer1.value(s, pi1.row(s)) + g.tau() * g.regularizer2.value(s, pi2.row(s));
    for (int j = 0; j < J; ++j) st->reward[s * J + j] = g.reward[s * J + j] + shift;
  }
  pbrl::joint_policy(pi1, pi2, st->pi);
  const pbrl::Mdp<Real, S, J> m{st->reward, g.transition, g.initial, g.discount, {}};
  REQUIRE(pbrl::evaluate(m, st->pi, st->ws, st->eval) == pbrl::Status::ok);
  return st->eval.value;
}

