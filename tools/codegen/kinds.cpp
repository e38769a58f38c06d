#include "kinds.hpp"

namespace codegen {

namespace {

// Sizes by index: 0 = states, then the kind's action counts.
long long reward_shaping_ram(const std::vector<long long>& n) {
  return n[0] * n[0] + n[0] * n[1];  // LU; Model: r + x
}
long long stackelberg_ram(const std::vector<long long>& n) {
  const long long s = n[0], al = n[1], af = n[2];
  return s * s + s * af * s + 3 * s * af + s * al;  // LU; Model: P_x, r_x, r'_x, gradients
}
long long incentive_design_ram(const std::vector<long long>& n) {
  return n[0] * n[0] + 3 * n[0] * n[1] * n[2];  // LU; Model: r_x, r_id - c, joint policy
}

}  // namespace

const std::vector<KindSpec>& kinds() {
  static const std::vector<KindSpec> table = {
      {"reward_shaping",
       {"states", "actions"},
       "pbrl::RewardShaping",
       "pbrl/problems/reward_shaping.hpp",
       false,
       {{"reward", {0, 1}, Rows::none, false},
        {"transition", {0, 1, 0}, Rows::transition, false},
        {"initial", {0}, Rows::initial, false}},
       {{"lower", 1}, {"upper", 1}},
       false,
       "shaping",
       false,
       false,
       {1},
       {0, 1},  // shaping(s, a)
       reward_shaping_ram},
      {"stackelberg",
       {"states", "leader_actions", "follower_actions"},
       "pbrl::Stackelberg",
       "pbrl/problems/stackelberg.hpp",
       false,
       {{"leader_reward", {0, 1, 2}, Rows::none, false},
        {"follower_reward", {0, 1, 2}, Rows::none, false},
        {"transition", {0, 1, 2, 0}, Rows::transition, false},
        {"initial", {0}, Rows::initial, false}},
       {{"leader", 1}, {"follower", 2}},
       false,
       nullptr,
       true,
       false,
       {2},
       {0, 1},  // leader logits x(s, a_l)
       stackelberg_ram},
      {"incentive_design",
       {"states", "actions1", "actions2"},
       "pbrl::IncentiveDesign",
       "pbrl/problems/incentive_design.hpp",
       true,
       {{"reward", {0, 1, 2}, Rows::none, false},
        {"transition", {0, 1, 2, 0}, Rows::transition, false},
        {"initial", {0}, Rows::initial, false},
        {"designer_reward", {0, 1, 2}, Rows::none, false},
        {"designer_transition", {0, 1, 2, 0}, Rows::transition, false},
        {"designer_cost", {0}, Rows::none, true}},
       {{"regularizer1", 1}, {"regularizer2", 2}},
       true,
       "incentive",
       false,
       true,
       {1, 2},
       {0, 1, 2},  // incentive x(s, a1, a2)
       incentive_design_ram},
  };
  return table;
}

const KindSpec* find_kind(const std::string& kind) {
  for (const KindSpec& k : kinds())
    if (kind == k.kind) return &k;
  return nullptr;
}

}  // namespace codegen
