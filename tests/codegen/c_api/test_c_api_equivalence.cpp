// The generated C interface runs the solver the generated C++ header declares, as a C++ user runs
// it (problem.init(data()), solver.init(problem, settings(), x0 = 0, zero logits)): after the same
// steps, with and without reports, x, the policies, the reports' numbers and the checkpoint images
// are the same bytes (one compiler, one set of flags: bit for bit), and images pass between the two.
#include "incentive.h"
#include "incentive_pbrl.hpp"
#include "stackelberg.h"
#include "stackelberg_pbrl.hpp"

#include <pbrl/solver/checkpoint.hpp>

#include <doctest/doctest.h>

#include <cstring>

namespace {

// The C++ API's start, written out as a firmware would (softmax policies: zero logits are uniform).
template <class Problem>
pbrl::Status init_cpp(pbrl::PbrlZeroSum<Problem>& solver, const Problem& problem,
                      const typename pbrl::PbrlZeroSum<Problem>::Settings& settings) {
  using Solver = pbrl::PbrlZeroSum<Problem>;
  return solver.init(problem, settings, Problem::Params::Zero(), Solver::Matrix1::Zero(), Solver::Matrix2::Zero());
}
template <class Problem>
pbrl::Status init_cpp(pbrl::Pbrl<Problem>& solver, const Problem& problem,
                      const typename pbrl::Pbrl<Problem>::Settings& settings) {
  return solver.init(problem, settings, Problem::Params::Zero(), pbrl::Pbrl<Problem>::Matrix::Zero());
}

// The policies in the C interface's order: pi1 then pi2 for a game.
template <class Problem, typename Scalar>
void policies(const pbrl::PbrlZeroSum<Problem>& solver, Scalar* out) {
  typename pbrl::PbrlZeroSum<Problem>::Matrix1 pi1;
  typename pbrl::PbrlZeroSum<Problem>::Matrix2 pi2;
  solver.policy1(pi1);
  solver.policy2(pi2);
  std::memcpy(out, pi1.data(), sizeof(Scalar) * std::size_t(pi1.size()));
  std::memcpy(out + pi1.size(), pi2.data(), sizeof(Scalar) * std::size_t(pi2.size()));
}
template <class Problem, typename Scalar>
void policies(const pbrl::Pbrl<Problem>& solver, Scalar* out) {
  typename pbrl::Pbrl<Problem>::Matrix pi;
  solver.policy(pi);
  std::memcpy(out, pi.data(), sizeof(Scalar) * std::size_t(pi.size()));
}

template <typename T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Each model's two interfaces: its C++ namespace `name` and its C functions pbrl_<name>_*.
#define PBRL_TEST_MODEL(Type, name, NAME)                                               \
  struct Type {                                                                         \
    using Problem = name::Problem;                                                      \
    using Solver = name::Solver;                                                        \
    using Workspace = pbrl_##name##_workspace;                                          \
    using Report = pbrl_##name##_report;                                                \
    static constexpr auto data = name::data;                                            \
    static constexpr auto settings = name::settings;                                    \
    static constexpr auto init = pbrl_##name##_init;                                    \
    static constexpr auto step = pbrl_##name##_step;                                    \
    static constexpr auto run = pbrl_##name##_run;                                      \
    static constexpr auto solve = pbrl_##name##_solve;                                  \
    static constexpr auto get_x = pbrl_##name##_get_x;                                  \
    static constexpr auto get_policies = pbrl_##name##_get_policies;                    \
    static constexpr auto save = pbrl_##name##_save_checkpoint;                         \
    static constexpr auto restore = pbrl_##name##_restore_checkpoint;                   \
    static constexpr std::size_t kPolicies = PBRL_##NAME##_POLICY_ENTRIES;              \
    static constexpr std::size_t kImage = PBRL_##NAME##_CHECKPOINT_BYTES;               \
  }
PBRL_TEST_MODEL(Incentive, incentive, INCENTIVE);
PBRL_TEST_MODEL(Stackelberg, stackelberg, STACKELBERG);

template <class M>
void runs_like_the_cpp_api() {
  using Solver = typename M::Solver;
  using Scalar = typename Solver::Scalar;
  constexpr std::size_t kParams = M::Problem::kParams;
  static typename M::Problem problem;
  static Solver solver;
  static typename M::Workspace ws, ws2;
  static_assert(pbrl::checkpoint_size<Solver>() == M::kImage, "");
  REQUIRE(problem.init(M::data()) == pbrl::Status::ok);
  REQUIRE(init_cpp(solver, problem, M::settings()) == pbrl::Status::ok);
  REQUIRE(M::init(&ws) == PBRL_OK);

  typename Solver::Report r;
  typename M::Report c;
  for (int k = 0; k < 12; ++k) {
    const bool report = k % 2 == 0;  // without one the solver skips the certificate's work
    REQUIRE(solver.step(report ? &r : nullptr) == pbrl::Status::ok);
    REQUIRE(M::step(&ws, report ? &c : nullptr) == PBRL_OK);
    if (!report) continue;
    CHECK(c.iteration == r.iteration);
    CHECK(c.environment_steps == r.environment_steps);
    CHECK(same_bits(c.upper_objective, r.upper_objective));
    CHECK(same_bits(c.penalty, r.penalty));
    CHECK(same_bits(c.objective, r.objective));
    CHECK(same_bits(c.lambda, r.lambda));
    CHECK(same_bits(c.projected_gradient_norm, r.projected_gradient_norm));
    CHECK(same_bits(c.gap_bound, r.gap_bound));
  }
  REQUIRE(solver.run(5, &r) == pbrl::Status::ok);
  REQUIRE(M::run(&ws, 5, &c) == PBRL_OK);
  CHECK(c.iteration == 16);
  CHECK(same_bits(c.objective, r.objective));
  // solve: the same outcome, steps and last report.
  pbrl::SolveResult solved;
  pbrl_solve_result c_solved;
  REQUIRE(solver.solve(4, solved, &r) == pbrl::Status::ok);
  REQUIRE(M::solve(&ws, 4, &c_solved, &c) == PBRL_OK);
  CHECK(int(c_solved.outcome) == int(solved.outcome));
  CHECK(c_solved.steps == solved.steps);
  CHECK(c.iteration == r.iteration);
  CHECK(c.converged == r.converged);
  CHECK(same_bits(c.objective, r.objective));

  Scalar x[kParams], pi_c[M::kPolicies], pi_cpp[M::kPolicies];
  REQUIRE(M::get_x(&ws, x, kParams) == PBRL_OK);
  CHECK(solver.x().cwiseAbs().maxCoeff() > Scalar(0));  // x moved: the comparison is not of zeros
  CHECK(std::memcmp(x, solver.x().data(), sizeof x) == 0);
  REQUIRE(M::get_policies(&ws, pi_c, M::kPolicies) == PBRL_OK);
  policies(solver, pi_cpp);
  CHECK(std::memcmp(pi_c, pi_cpp, sizeof pi_c) == 0);

  static unsigned char image_c[M::kImage], image_cpp[M::kImage];
  REQUIRE(M::save(&ws, image_c, M::kImage) == PBRL_OK);
  REQUIRE(pbrl::save_checkpoint(solver, image_cpp, M::kImage) == pbrl::Status::ok);
  CHECK(std::memcmp(image_c, image_cpp, M::kImage) == 0);

  // A C++ image restores into a C workspace, which then steps like the C++ solver.
  REQUIRE(M::init(&ws2) == PBRL_OK);
  REQUIRE(M::restore(&ws2, image_cpp, M::kImage) == PBRL_OK);
  REQUIRE(solver.step(nullptr) == pbrl::Status::ok);
  REQUIRE(M::step(&ws2, nullptr) == PBRL_OK);
  REQUIRE(M::get_x(&ws2, x, kParams) == PBRL_OK);
  CHECK(std::memcmp(x, solver.x().data(), sizeof x) == 0);
}

}  // namespace

TEST_CASE("C interface: incentive design in float (PbrlZeroSum, sampled) runs like the C++ API") {
  runs_like_the_cpp_api<Incentive>();
}

TEST_CASE("C interface: Stackelberg game in double (Pbrl, Bellman penalty) runs like the C++ API") {
  runs_like_the_cpp_api<Stackelberg>();
}
