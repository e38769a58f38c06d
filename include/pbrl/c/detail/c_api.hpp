#pragma once
// What a generated C interface runs. For a manifest `name`, pbrl-codegen writes <name>.h (the C
// declarations), <name>_c_api.cpp (extern "C" functions that forward to Api<Model> below, Model
// naming the generated Problem, Solver, data() and settings()) and <name>_sizes.cpp, from which the
// build measures Layout for its target (tools/codegen/README.md, cmake/PbrlCApi.cmake).
//
// The caller owns the workspace: PBRL_<NAME>_WORKSPACE_BYTES bytes (Layout::kBytes on the target),
// a Tag, then the Problem (views of the flash arrays) and the Solver, which init constructs in
// place. Every function checks its arguments first, in the C++ API's order (null pointers, a
// workspace no init succeeded on, short arrays), and on a refusal changes nothing; after that the
// library's own guarantee holds (a failed step, restore or init leaves the solver as it was).
#include "pbrl/oracle/bilevel_value.hpp"
#include "pbrl/c/pbrl_c.h"
#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/estimate/estimated_model.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/solver/solve_outcome.hpp"
#include "pbrl/solver/step_slices.hpp"
#include "pbrl/core/status.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>  // placement new only: objects are built in the caller's workspace bytes
#include <type_traits>

namespace pbrl::c_api {

// A workspace's first bytes once an init succeeded: kMagic and the workspace's own address. The
// address matters because the solver points at the problem beside it: a workspace copied elsewhere
// (memcpy) would use, and depend on, the original's problem, so the copy counts as not initialized.
struct Tag {
  std::uint64_t magic;
  const void* self;
};
constexpr std::uint64_t kMagic = 0x4950414332524250ull;  // "PBR2CAPI" in memory order

// The workspace's body: the problem (a view of the flash arrays) and the solver; with an estimated
// model (Estimated = EstimatedModel<Problem, Count>, estimate/estimated_model.hpp), the
// EstimatedModel (the problem, the estimate, two RAM transition arrays) in the problem's place.
template <class Problem, class Solver, class Estimated = void>
struct Instance {
  Problem problem;
  Solver solver;
  Problem& model_problem() { return problem; }
  const Problem& solver_problem() const { return problem; }
};
template <class Problem, class Solver, class Estimated>
struct EstimatedInstance {
  Estimated model;
  Solver solver;
  Problem& model_problem() { return model.problem(); }
  const Problem& solver_problem() const { return model.problem(); }
};

// Where things sit in a workspace; depends on the target's ABI (pointer size, alignment), which is
// why the build measures it with the target's compiler (<name>_sizes.cpp).
template <class Problem, class Solver, class Estimated = void>
struct Layout {
  static constexpr bool kEstimated = !std::is_void<Estimated>::value;
  using Body = std::conditional_t<kEstimated, EstimatedInstance<Problem, Solver, Estimated>,
                                  Instance<Problem, Solver>>;
  static constexpr std::size_t kOffset = (sizeof(Tag) + alignof(Body) - 1) / alignof(Body) * alignof(Body);
  static constexpr std::size_t kBytes = kOffset + sizeof(Body);
  static constexpr std::size_t kAlign = alignof(Body) > alignof(Tag) ? alignof(Body) : alignof(Tag);
  static constexpr std::size_t checkpoint_bytes() {
    if constexpr (kEstimated) {
      return checkpoint_size<Solver, typename Estimated::Estimate>();
    } else {
      return checkpoint_size<Solver>();
    }
  }
  static constexpr std::size_t kCheckpointBytes = checkpoint_bytes();
  // The caller's scratch of value_at_best_response (a separate object: most firmware never asks).
  using ValueWorkspace = typename Problem::BilevelValueWorkspace;
  static constexpr std::size_t kValueBytes = sizeof(ValueWorkspace);
  static constexpr std::size_t kValueAlign = alignof(ValueWorkspace);
};

// The Stackelberg leader's action count (its policy is softmax(x) row by row), 0 for other kinds.
template <class Problem, class = void>
struct LeaderActions : std::integral_constant<int, 0> {};
template <class Problem>
struct LeaderActions<Problem, std::void_t<decltype(Problem::kLeaderActions)>>
    : std::integral_constant<int, Problem::kLeaderActions> {};

// The generated Model's Estimated type, void for a model the manifest does not estimate.
template <class Model, class = void>
struct EstimatedOf {
  using type = void;
};
template <class Model>
struct EstimatedOf<Model, std::void_t<typename Model::Estimated>> {
  using type = typename Model::Estimated;
};

// Lower-level players: 2 for PbrlZeroSum (Matrix1, Matrix2), else 1.
template <class Solver, class = void>
struct Players : std::integral_constant<int, 1> {};
template <class Solver>
struct Players<Solver, std::void_t<typename Solver::Matrix2>> : std::integral_constant<int, 2> {};

// Entries of the lower level's policies: S x A, or S x A1 then S x A2 for a game.
template <class Solver>
constexpr std::size_t policy_entries() {
  if constexpr (Players<Solver>::value == 2) {
    return std::size_t(Solver::S) * std::size_t(Solver::A1 + Solver::A2);
  } else {
    return std::size_t(Solver::S) * std::size_t(Solver::A);
  }
}

// pbrl_status has Status's values (src/c_status.cpp checks them).
inline pbrl_status to_c(Status st) { return static_cast<pbrl_status>(st); }

// Model (generated): Problem, Solver; Workspace and Report, the C header's structs;
// copy_report(solver report, C report); data() and settings(); the C header's constants
// kWorkspaceBytes, kWorkspaceAlign, kCheckpointBytes, kParams,
// kPolicyEntries, checked here against the types.
template <class Model>
class Api {
 public:
  using Problem = typename Model::Problem;
  using Solver = typename Model::Solver;
  using Scalar = typename Problem::Scalar;
  using Params = typename Problem::Params;
  using CWorkspace = typename Model::Workspace;
  using CReport = typename Model::Report;
  using Estimated = typename EstimatedOf<Model>::type;
  static constexpr bool kEstimated = !std::is_void<Estimated>::value;
  using Sizes = Layout<Problem, Solver, Estimated>;
  using Body = typename Sizes::Body;
  static constexpr int kPlayers = Players<Solver>::value;
  static constexpr std::size_t kParams = std::size_t(Problem::kParams);
  static constexpr std::size_t kPolicyEntries = policy_entries<Solver>();

  // A <name>_sizes.h measured for another target or another model does not compile.
  static_assert(Sizes::kBytes <= Model::kWorkspaceBytes && sizeof(CWorkspace) >= Sizes::kBytes,
                "PBRL_<NAME>_WORKSPACE_BYTES is smaller than the workspace: <name>_sizes.h is stale");
  static_assert(Model::kWorkspaceAlign % Sizes::kAlign == 0 && alignof(CWorkspace) % Sizes::kAlign == 0,
                "PBRL_<NAME>_WORKSPACE_ALIGN is not a multiple of the workspace's alignment");
  static_assert(Model::kCheckpointBytes == Sizes::kCheckpointBytes,
                "PBRL_<NAME>_CHECKPOINT_BYTES is not the image's size");
  static_assert(Model::kParams == kParams && Model::kPolicyEntries == kPolicyEntries,
                "the C header's sizes are not the solver's");

  // x0 = 0 projected onto the problem's box, uniform policies.
  static pbrl_status init(CWorkspace* ws) {
    if (ws == nullptr) return PBRL_NULL_POINTER;
    Params x = Params::Zero();
    return start(*ws, x, true);
  }

  // x0 from the caller (kParams entries), uniform policies.
  static pbrl_status init_with(CWorkspace* ws, const Scalar* x0, std::size_t length) {
    if (ws == nullptr || x0 == nullptr) return PBRL_NULL_POINTER;
    if (length < kParams) return PBRL_BUFFER_TOO_SMALL;
    Params x;
    std::memcpy(x.data(), x0, kParams * sizeof(Scalar));
    return start(*ws, x, false);
  }

  static pbrl_status step(CWorkspace* ws, CReport* report) {
    return reported(ws, report, [](Solver& solver, typename Solver::Report* r, bool& filled) {
      filled = true;
      return solver.step(r);
    });
  }

  // As Solver::step_slice; the report is converted when the slice completes the step.
  static pbrl_status step_slice(CWorkspace* ws, std::int32_t max_rollouts, pbrl_slice* slice, CReport* report) {
    if (slice == nullptr) return PBRL_NULL_POINTER;
    return reported(ws, report, [&](Solver& solver, typename Solver::Report* r, bool& filled) {
      SliceResult s;
      if (Status st = solver.step_slice(max_rollouts, s, r); st != Status::ok) return st;
      slice->part = static_cast<pbrl_step_part>(s.part);
      slice->slice = s.slice;
      slice->step_done = s.step_done;
      filled = s.step_done;
      return Status::ok;
    });
  }

  // As Solver::run: steps done before an error stay done (iteration() counts them); the report is
  // the last step's, written only if all succeeded.
  static pbrl_status run(CWorkspace* ws, std::int64_t iterations, CReport* report) {
    return reported(ws, report, [&](Solver& solver, typename Solver::Report* r, bool& filled) {
      filled = iterations > 0;
      return solver.run(iterations, r);
    });
  }

  // As Solver::solve: steps done before an error stay done; the result is written when it returns
  // ok, the report (the last step's) when a step ran.
  static pbrl_status solve(CWorkspace* ws, std::int64_t max_steps, pbrl_solve_result* result, CReport* report) {
    if (result == nullptr) return PBRL_NULL_POINTER;
    return reported(ws, report, [&](Solver& solver, typename Solver::Report* r, bool& filled) {
      SolveResult out;
      if (Status st = solver.solve(max_steps, out, r); st != Status::ok) return st;
      result->outcome = static_cast<pbrl_solve_outcome>(out.outcome);
      result->steps = out.steps;
      filled = out.steps > 0;
      return Status::ok;
    });
  }

  static pbrl_status iteration(const CWorkspace* ws, std::int64_t* out) {
    if (out == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    *out = body(*ws).solver.iteration();
    return PBRL_OK;
  }

  static pbrl_status get_x(const CWorkspace* ws, Scalar* out, std::size_t length) {
    if (pbrl_status st = check_output(ws, out, length, kParams); st != PBRL_OK) return st;
    std::memcpy(out, body(*ws).solver.x().data(), kParams * sizeof(Scalar));
    return PBRL_OK;
  }

  // pi(a|s) of the lower level's current parameters, row by row; games: player 1's, then player 2's.
  static pbrl_status get_policies(const CWorkspace* ws, Scalar* out, std::size_t length) {
    if (pbrl_status st = check_output(ws, out, length, kPolicyEntries); st != PBRL_OK) return st;
    const Solver& solver = body(*ws).solver;
    if constexpr (kPlayers == 2) {
      typename Solver::Matrix1 pi1;
      typename Solver::Matrix2 pi2;
      solver.policy1(pi1);
      solver.policy2(pi2);
      std::memcpy(out, pi1.data(), sizeof(Scalar) * std::size_t(pi1.size()));
      std::memcpy(out + pi1.size(), pi2.data(), sizeof(Scalar) * std::size_t(pi2.size()));
    } else {
      typename Solver::Matrix pi;
      solver.policy(pi);
      std::memcpy(out, pi.data(), sizeof(Scalar) * std::size_t(pi.size()));
    }
    return PBRL_OK;
  }

  // With an estimated model the image carries the estimate too, and a restore ends with a whole
  // refresh: the solver then runs on the restored estimate's mean (a new model generation).
  static pbrl_status save_checkpoint(const CWorkspace* ws, unsigned char* buffer, std::size_t size) {
    if (buffer == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    const Body& b = body(*ws);
    if constexpr (kEstimated) {
      return to_c(pbrl::save_checkpoint(b.solver, b.model.estimate(), buffer, size));
    } else {
      return to_c(pbrl::save_checkpoint(b.solver, buffer, size));
    }
  }

  static pbrl_status restore_checkpoint(CWorkspace* ws, const unsigned char* buffer, std::size_t size) {
    if (buffer == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    Body& b = body(*ws);
    if constexpr (kEstimated) {
      if (Status st = pbrl::restore_checkpoint(b.solver, b.model.estimate(), buffer, size); st != Status::ok)
        return to_c(st);
      return to_c(b.model.refresh(b.solver));
    } else {
      return to_c(pbrl::restore_checkpoint(b.solver, buffer, size));
    }
  }

  static pbrl_status restore_newest_checkpoint(CWorkspace* ws, const unsigned char* slot_a,
                                               const unsigned char* slot_b, std::size_t slot_size) {
    if (slot_a == nullptr || slot_b == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    Body& b = body(*ws);
    if constexpr (kEstimated) {
      if (Status st = pbrl::restore_newest_checkpoint(b.solver, b.model.estimate(), slot_a, slot_b, slot_size);
          st != Status::ok)
        return to_c(st);
      return to_c(b.model.refresh(b.solver));
    } else {
      return to_c(pbrl::restore_newest_checkpoint(b.solver, slot_a, slot_b, slot_size));
    }
  }

  // Slots shorter than an image are refused (the C++ function would count them as empty).
  static pbrl_status checkpoint_slot_to_write(const unsigned char* slot_a, const unsigned char* slot_b,
                                              std::size_t slot_size, int* slot) {
    if (slot_a == nullptr || slot_b == nullptr || slot == nullptr) return PBRL_NULL_POINTER;
    if (slot_size < Sizes::kCheckpointBytes) return PBRL_BUFFER_TOO_SMALL;
    if constexpr (kEstimated) {
      *slot = pbrl::checkpoint_slot_to_write<Solver, typename Estimated::Estimate>(slot_a, slot_b, slot_size);
    } else {
      *slot = pbrl::checkpoint_slot_to_write<Solver>(slot_a, slot_b, slot_size);
    }
    return PBRL_OK;
  }

  // The Stackelberg leader's policy pi_x(a_l|s) = softmax(x(s, .)), S x A_l entries.
  static pbrl_status get_leader_policy(const CWorkspace* ws, Scalar* out, std::size_t length) {
    constexpr int AL = LeaderActions<Problem>::value;
    static_assert(AL > 0, "a Stackelberg model's");
    constexpr std::size_t n = std::size_t(Problem::kStates) * std::size_t(AL);
    if (pbrl_status st = check_output(ws, out, length, n); st != PBRL_OK) return st;
    const Body& b = body(*ws);
    typename Problem::LeaderMatrix pi;
    if (Status st = b.solver_problem().leader_policy(b.solver.x(), pi); st != Status::ok) return to_c(st);
    std::memcpy(out, pi.data(), sizeof(Scalar) * n);
    return PBRL_OK;
  }

  // The bilevel answer at the current x (Problem::value_at_best_response): the upper level's value
  // at the lower level's exact regularized solution, with its certificate. `scratch`: the caller's
  // ValueWorkspace bytes (M(x) and the solves), set up afresh by each call; the workspace is not
  // changed. The result is written only with PBRL_OK.
  template <class CValueWorkspace, class CBilevelValue>
  static pbrl_status value_at_best_response(const CWorkspace* ws, CValueWorkspace* scratch, CBilevelValue* out) {
    if (scratch == nullptr || out == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    static_assert(sizeof(CValueWorkspace) >= Sizes::kValueBytes && alignof(CValueWorkspace) % Sizes::kValueAlign == 0,
                  "PBRL_<NAME>_VALUE_WORKSPACE_* do not fit the problem's BilevelValueWorkspace: <name>_sizes.h is stale");
    auto* v = new (scratch->bytes) typename Sizes::ValueWorkspace();
    const Body& b = body(*ws);
    BestResponseValue<Scalar> r;
    const Status st = b.solver_problem().value_at_best_response(b.solver.x(), *v, r);
    if (st != Status::ok) return to_c(st);
    out->value = r.value;
    out->lower_level_gap = r.lower_level_gap;
    out->iterations = r.iterations;
    out->converged = r.converged;
    return PBRL_OK;
  }

  static pbrl_status model_generation(const CWorkspace* ws, std::int64_t* out) {
    if (out == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    *out = body(*ws).solver.model_generation();
    return PBRL_OK;
  }

  // An estimated model (EstimatedModel): observations, the refresh rule, refreshes in slices.
  // One observed transition: (s, a, s') of a single agent, (s, a1, a2, s') of two players.
  static pbrl_status observe(CWorkspace* ws, std::int32_t s, std::int32_t a1, std::int32_t a2, std::int32_t s_next) {
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    return to_c(body(*ws).model.observe(int(s), int(a1), int(a2), int(s_next)));
  }
  static pbrl_status observe(CWorkspace* ws, std::int32_t s, std::int32_t a, std::int32_t s_next) {
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    return to_c(body(*ws).model.observe(int(s), int(a), int(s_next)));
  }
  static pbrl_status refresh_due(const CWorkspace* ws, int* due) {
    if (due == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    *due = body(*ws).model.refresh_due() ? 1 : 0;
    return PBRL_OK;
  }
  static pbrl_status refresh_slice(CWorkspace* ws, std::int32_t max_rows, int* committed) {
    if (committed == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    Body& b = body(*ws);
    bool done = false;
    const Status st = b.model.refresh_slice(b.solver, int(max_rows), done);
    if (st == Status::ok) *committed = done ? 1 : 0;
    return to_c(st);
  }
  static pbrl_status refresh(CWorkspace* ws) {
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    Body& b = body(*ws);
    return to_c(b.model.refresh(b.solver));
  }
  // Observations of each joint row (s, a) or (s, a1, a2) since init: Estimated::kRows entries.
  static pbrl_status row_observations(const CWorkspace* ws, std::int64_t* out, std::size_t length) {
    if (out == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    if (length < std::size_t(Estimated::kRows)) return PBRL_BUFFER_TOO_SMALL;
    std::memcpy(out, body(*ws).model.estimate().row_observations(), sizeof(std::int64_t) * Estimated::kRows);
    return PBRL_OK;
  }

 private:
  static bool initialized(const CWorkspace& ws) {
    Tag tag;
    std::memcpy(&tag, ws.bytes, sizeof tag);
    return tag.magic == kMagic && tag.self == static_cast<const void*>(ws.bytes);
  }
  static Body& body(CWorkspace& ws) { return *std::launder(reinterpret_cast<Body*>(ws.bytes + Sizes::kOffset)); }
  static const Body& body(const CWorkspace& ws) {
    return *std::launder(reinterpret_cast<const Body*>(ws.bytes + Sizes::kOffset));
  }

  static pbrl_status check(const CWorkspace* ws) {
    if (ws == nullptr) return PBRL_NULL_POINTER;
    return initialized(*ws) ? PBRL_OK : PBRL_NOT_INITIALIZED;
  }
  static pbrl_status check_output(const CWorkspace* ws, const Scalar* out, std::size_t length, std::size_t needed) {
    if (out == nullptr) return PBRL_NULL_POINTER;
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    return length < needed ? PBRL_BUFFER_TOO_SMALL : PBRL_OK;
  }

  // A stepping call on a checked workspace: call(solver, r, filled) runs it with a solver report
  // only when the caller gave one (without, the solver skips the certificate's work) and sets
  // filled when r holds a step's numbers; on ok those are converted into *report.
  template <class Call>
  static pbrl_status reported(CWorkspace* ws, CReport* report, Call&& call) {
    if (pbrl_status st = check(ws); st != PBRL_OK) return st;
    typename Solver::Report r;
    bool filled = false;
    const Status st = call(body(*ws).solver, report != nullptr ? &r : nullptr, filled);
    if (st == Status::ok && filled && report != nullptr) *report = convert(r);
    return to_c(st);
  }

  // x is checked on a problem on the stack before the workspace changes. What is left to fail
  // after that, the model and the settings, pbrl-codegen has checked with the same library code,
  // so a refusal here leaves the workspace as it was.
  static pbrl_status start(CWorkspace& ws, Params& x, bool project) {
    {
      Problem scratch;
      if (Status st = scratch.init(Model::data()); st != Status::ok) return to_c(st);
      if (project) scratch.project_parameters(x);
      if (Status st = scratch.validate_parameters(x); st != Status::ok) return to_c(st);
    }
    if constexpr (kEstimated) {
      if (Status st = Estimated::Estimate::check_init(Model::data().transition, Model::estimate_strength(),
                                                      Model::estimate_settings());
          st != Status::ok)
        return to_c(st);
    }
    if (!initialized(ws)) new (ws.bytes + Sizes::kOffset) Body();
    Body& b = body(ws);
    // An initialized workspace's problem gets the same views again (an estimated model starts over
    // from its prior); its solver points at it.
    if constexpr (kEstimated) {
      if (Status st = b.model.init(Model::data(), Model::estimate_strength(), Model::estimate_settings());
          st != Status::ok)
        return to_c(st);
    } else {
      if (Status st = b.problem.init(Model::data()); st != Status::ok) return to_c(st);
    }
    const typename Solver::Settings settings = Model::settings();
    Status st;
    if constexpr (kPlayers == 2) {
      typename Solver::Matrix1 y1;
      typename Solver::Matrix2 y2;
      uniform_parameters(settings.policy, y1);
      uniform_parameters(settings.policy, y2);
      st = b.solver.init(b.model_problem(), settings, x, y1, y2);
    } else {
      typename Solver::Matrix y;
      uniform_parameters(settings.policy, y);
      st = b.solver.init(b.model_problem(), settings, x, y);
    }
    if (st != Status::ok) return to_c(st);
    const Tag tag{kMagic, ws.bytes};
    std::memcpy(ws.bytes, &tag, sizeof tag);
    return PBRL_OK;
  }

  static CReport convert(const typename Solver::Report& r) {
    CReport out{};
    Model::copy_report(r, out);  // generated from the report's visit(): every field, by name
    return out;
  }
};

}  // namespace pbrl::c_api
