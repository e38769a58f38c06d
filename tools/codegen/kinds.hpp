#pragma once
// The problem kinds a manifest can name. What a kind's Data holds (its sizes, arrays, regularizers,
// box and scalars, with their manifest keys, which are the members' names) is read from the
// problem's Data::visit() (include/pbrl/model/data_layout.hpp), so it is stated once, in the library.
// What the library's headers do not say is the tool's, named in kinds.cpp: the C++ names the
// generated headers use, the solver, the axes of x and of the lower level's policies, the RAM
// estimate, and the manifest's rule for each scalar.

#include <pbrl/model/data_layout.hpp>

#include <string>
#include <vector>

namespace codegen {

struct ArraySpec {
  const char* field;                // Data member and manifest key
  std::vector<int> dims;            // indices into KindSpec::sizes, in numpy's axis order
  pbrl::layout::Rows rows;          // how the library checks the rows (beyond every entry finite)
  pbrl::layout::Presence presence;  // optional: the manifest may leave it out (nullptr in Data)
  bool optional() const { return presence == pbrl::layout::Presence::optional; }
};

struct RegularizerSpec {
  const char* field;  // Data member (a Regularizer) and manifest key
  int actions;        // index into KindSpec::sizes: the reference's rows have this many entries
};

// Whether a manifest must give a Data scalar.
enum class InManifest {
  required,
  optional,  // absent: Data's default
};

// The check a Data scalar gets, the one its problem's init() makes.
enum class ScalarCheck {
  positive,  // finite and > 0
  finite,
};

// A Data scalar other than discount (which every kind has, and the manifest always gives).
struct ScalarSpec {
  const char* field;  // Data member and manifest key
  InManifest need;
  ScalarCheck check;
  float float_default;  // Data's default in each scalar
  double double_default;
  template <typename Scalar>
  Scalar library_default() const {
    if constexpr (sizeof(Scalar) == sizeof(float))
      return float_default;
    else
      return double_default;
  }
};

struct KindSpec {
  // From the problem's header.
  const char* kind = nullptr;       // manifest "kind": enum_name(Problem::kProblemKind)
  std::vector<const char*> sizes;   // the sizes' names (manifest keys), in template order after Scalar
  std::vector<const char*> fields;  // every Data member (manifest key), in Data::visit() order
  std::vector<ArraySpec> arrays;    // in Data::visit() order
  std::vector<RegularizerSpec> regularizers;
  const char* box = nullptr;        // the Box<Scalar> member ({lower, upper}); nullptr: Data has none
  std::vector<ScalarSpec> scalars;  // in Data::visit() order

  // The tool's.
  const char* problem = nullptr;  // class template, as the generated headers spell it
  const char* problem_header = nullptr;
  bool zero_sum = false;          // PbrlZeroSum (a game's lower level), else Pbrl
  bool same_tau = false;          // the regularizers share one tau (validate(MarkovGame), game.hpp)
  std::vector<int> policy_actions;  // the action counts the solver's policy sets are checked for
  std::vector<int> params;          // the axes of x in its flat layout (Problem::kParams, the C API)
  // A lower bound on the solver's RAM in scalars (tools/codegen/README.md, "ram_limit_bytes"): the problem's Model,
  // which every solver holds (M(x)), and the S x S matrix of the direct evaluation's LU.
  long long (*solver_scalars)(const std::vector<long long>& sizes) = nullptr;
};

const std::vector<KindSpec>& kinds();
const KindSpec* find_kind(const std::string& kind);
// "reward_shaping, stackelberg, incentive_design": the kinds' names, in kinds() order.
std::string kind_names();
// "(states, actions)", "(states,)": an array's shape by the sizes' names (dims as in ArraySpec).
std::string shape_names(const KindSpec& kind, const std::vector<int>& dims);

}  // namespace codegen
