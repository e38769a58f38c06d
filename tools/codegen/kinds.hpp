#pragma once
// What each problem kind's Data holds (include/pbrl/problems/*.hpp), as the manifest spells it:
// one manifest key per Data member, with the member's name. The library's Data structs are the
// reference: a member missing here fails to compile in the generated data(), which the round-trip
// tests (tests/codegen) build for every kind.

#include <string>
#include <vector>

namespace codegen {

// How the library checks an array (beyond "every entry finite", which holds for all).
enum class Rows {
  none,        // rewards, costs
  transition,  // rows over next states: >= 0, sum to one (validate_transition)
  initial,     // rho: > 0, sums to one (validate_initial)
};

struct ArraySpec {
  const char* field;      // Data member and manifest key
  std::vector<int> dims;  // indices into KindSpec::sizes, in numpy's axis order
  Rows rows;
  bool optional;  // absent: nullptr in Data (designer_cost: "no cost")
};

struct RegularizerSpec {
  const char* field;  // Data member (a Regularizer) and manifest key
  int actions;        // index into KindSpec::sizes: the reference's rows have this many entries
};

struct KindSpec {
  const char* kind;                // manifest "kind"
  std::vector<const char*> sizes;  // manifest keys, in the Problem's template order after Scalar
  const char* problem;             // class template
  const char* problem_header;
  bool zero_sum;  // PbrlZeroSum (a game's lower level), else Pbrl
  std::vector<ArraySpec> arrays;
  std::vector<RegularizerSpec> regularizers;
  bool same_tau;                    // the regularizers share one tau (validate(MarkovGame), game.hpp)
  const char* box;                  // Box<Scalar> member ({lower, upper}), or nullptr
  bool logit_bound;                 // Stackelberg: the leader's box [-B, B], B > 0
  bool incentive_scale;             // incentive design: c_x, finite (default: Data's)
  std::vector<int> policy_actions;  // the action counts the solver's policy sets are checked for
  std::vector<int> params;          // the axes of x in its flat layout (Problem::kParams, the C API)
  // A lower bound on the solver's RAM in scalars (tools/codegen/README.md, "ram_limit_bytes"): the problem's Model,
  // which every solver holds (M(x)), and the S x S matrix of the direct evaluation's LU.
  long long (*solver_scalars)(const std::vector<long long>& sizes);
};

const std::vector<KindSpec>& kinds();
const KindSpec* find_kind(const std::string& kind);

}  // namespace codegen
