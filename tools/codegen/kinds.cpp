#include "kinds.hpp"

#include <pbrl/problems/incentive_design.hpp>
#include <pbrl/problems/reward_shaping.hpp>
#include <pbrl/problems/stackelberg.hpp>

#include <cstring>
#include <stdexcept>

namespace codegen {

namespace {

// The manifest's rule for each Data scalar a kind has, discount aside: the check mirrors the
// problem's init(). A scalar added to a Data needs a rule here (kinds() refuses to start without).
struct ScalarRule {
  const char* field;
  InManifest need;
  ScalarCheck check;
};
constexpr ScalarRule kScalarRules[] = {
    {"logit_bound", InManifest::required, ScalarCheck::positive},   // Stackelberg::init
    {"incentive_scale", InManifest::optional, ScalarCheck::finite},  // IncentiveDesign::init
};

// Fills a KindSpec from Data::visit() of Problem<double, ...>: every axis an array or regularizer
// names gives its size's name at its position.
struct DataReader {
  KindSpec& spec;
  const char* problem;  // for the errors of a header the tool does not understand
  bool discount = false;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::logic_error(std::string(problem) + "::Data: " + what + " (tools/codegen/kinds.cpp)");
  }

  template <class Axis>
  int axis() {
    const std::size_t at = std::size_t(Axis::position);
    if (spec.sizes.size() <= at) spec.sizes.resize(at + 1, nullptr);
    if (spec.sizes[at] != nullptr && std::strcmp(spec.sizes[at], Axis::name) != 0)
      fail("two names for size " + std::to_string(at) + ": " + spec.sizes[at] + ", " + Axis::name);
    spec.sizes[at] = Axis::name;
    return Axis::position;
  }

  template <pbrl::layout::Rows R, pbrl::layout::Presence P, class... Axes>
  void operator()(const double*, pbrl::layout::Array<R, P, Axes...>, const char* name) {
    spec.fields.push_back(name);
    spec.arrays.push_back({name, {axis<Axes>()...}, R, P});
  }
  template <int S, int A, class ActionAxis>
  void operator()(const pbrl::Regularizer<double, S, A>&, ActionAxis, const char* name) {
    spec.fields.push_back(name);
    spec.regularizers.push_back({name, axis<ActionAxis>()});
  }
  void operator()(const pbrl::Box<double>&, const char* name) {
    if (spec.box != nullptr) fail(std::string("a second box, ") + name);
    spec.fields.push_back(name);
    spec.box = name;
  }
  void operator()(double value, const char* name) {
    spec.fields.push_back(name);
    if (std::strcmp(name, "discount") == 0) {  // every kind's, read by the tool for all
      discount = true;
      return;
    }
    for (const ScalarRule& rule : kScalarRules)
      if (std::strcmp(name, rule.field) == 0) {
        spec.scalars.push_back({name, rule.need, rule.check, 0.0f, value});
        return;
      }
    fail(std::string("the scalar ") + name + " has no manifest rule");
  }
};

// The float defaults of the scalars DataReader found, from Data::visit() of Problem<float, ...>.
struct FloatDefaults {
  KindSpec& spec;
  void operator()(float value, const char* name) {
    for (ScalarSpec& s : spec.scalars)
      if (std::strcmp(name, s.field) == 0) s.float_default = value;
  }
  template <class Field, class Layout>
  void operator()(const Field&, Layout, const char*) {}  // arrays and regularizers
  void operator()(const pbrl::Box<float>&, const char*) {}
};

// What Problem's header says of the kind: its name (kProblemKind) and its Data. The sizes are
// any valid ones; only the layout is read.
template <template <typename, int...> class Problem, int... Sizes>
KindSpec from_header(const char* problem, const char* problem_header) {
  using P = Problem<double, Sizes...>;
  KindSpec spec;
  spec.kind = pbrl::enum_name(P::kProblemKind);
  spec.problem = problem;
  spec.problem_header = problem_header;
  DataReader reader{spec, problem};
  typename P::Data{}.visit(reader);
  FloatDefaults defaults{spec};
  typename Problem<float, Sizes...>::Data{}.visit(defaults);
  if (!reader.discount) reader.fail("no discount");
  for (std::size_t i = 0; i < spec.sizes.size(); ++i)
    if (spec.sizes[i] == nullptr) reader.fail("no array or regularizer has size " + std::to_string(i));
  if (spec.sizes.size() != sizeof...(Sizes))
    reader.fail(std::to_string(spec.sizes.size()) + " sizes named for " + std::to_string(sizeof...(Sizes)) +
                " template sizes");
  if (std::strcmp(spec.sizes[0], "states") != 0) reader.fail("the first size is not the states");
  return spec;
}

// Indices into KindSpec::sizes of the given axes.
template <class... Axes>
std::vector<int> positions() {
  return {Axes::position...};
}

KindSpec reward_shaping() {
  using P = pbrl::RewardShaping<double, 2, 2>;
  KindSpec k = from_header<pbrl::RewardShaping, 2, 2>("pbrl::RewardShaping", "pbrl/problems/reward_shaping.hpp");
  k.zero_sum = false;
  k.policy_actions = positions<P::Actions>();
  k.params = positions<P::States, P::Actions>();  // shaping(s, a)
  k.solver_scalars = [](const std::vector<long long>& n) {
    const long long s = n[P::States::position], a = n[P::Actions::position];
    return s * s + s * a;  // LU; Model: r + x
  };
  return k;
}

KindSpec stackelberg() {
  using P = pbrl::Stackelberg<double, 2, 2, 2>;
  KindSpec k = from_header<pbrl::Stackelberg, 2, 2, 2>("pbrl::Stackelberg", "pbrl/problems/stackelberg.hpp");
  k.zero_sum = false;
  k.policy_actions = positions<P::FollowerActions>();
  k.params = positions<P::States, P::LeaderActions>();  // leader logits x(s, a_l)
  k.solver_scalars = [](const std::vector<long long>& n) {
    const long long s = n[P::States::position], al = n[P::LeaderActions::position],
                    af = n[P::FollowerActions::position];
    return s * s + s * af * s + 3 * s * af + s * al;  // LU; Model: P_x, r_x, r'_x, gradients
  };
  return k;
}

KindSpec incentive_design() {
  using P = pbrl::IncentiveDesign<double, 2, 2, 2>;
  KindSpec k =
      from_header<pbrl::IncentiveDesign, 2, 2, 2>("pbrl::IncentiveDesign", "pbrl/problems/incentive_design.hpp");
  k.zero_sum = true;
  k.same_tau = true;
  k.policy_actions = positions<P::Actions1, P::Actions2>();
  k.params = positions<P::States, P::Actions1, P::Actions2>();  // incentive x(s, a1, a2)
  k.solver_scalars = [](const std::vector<long long>& n) {
    const long long s = n[P::States::position], a1 = n[P::Actions1::position], a2 = n[P::Actions2::position];
    return s * s + 3 * s * a1 * a2;  // LU; Model: r_x, r_id - c, joint policy
  };
  return k;
}

}  // namespace

const std::vector<KindSpec>& kinds() {
  static const std::vector<KindSpec> table = {reward_shaping(), stackelberg(), incentive_design()};
  return table;
}

const KindSpec* find_kind(const std::string& kind) {
  for (const KindSpec& k : kinds())
    if (kind == k.kind) return &k;
  return nullptr;
}

std::string shape_names(const KindSpec& kind, const std::vector<int>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::string(kind.sizes[std::size_t(dims[i])]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

std::string kind_names() {
  std::string names;
  for (const KindSpec& k : kinds()) names += (names.empty() ? "" : ", ") + std::string(k.kind);
  return names;
}

}  // namespace codegen
