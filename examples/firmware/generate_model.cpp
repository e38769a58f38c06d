// Host tool: writes the firmware example's game model as a C++ header of const arrays, so the
// model lives in flash on the device. The model is a random incentive-design environment drawn
// the way the paper's experiment draws them (problems/random_instance.hpp), at the paper's size,
// in float (the Cortex-M4F's precision), from a seed; the header records the seed and the
// command. The firmware build never runs this: the header is committed, and a host test
// regenerates it and checks that it is unchanged.
//
//   pbrl_generate_model --seed 7 --out incentive_model.hpp
#include "../model_header.hpp"

#include <pbrl/problems/incentive_design.hpp>
#include <pbrl/problems/random_instance.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int S = 10, A1 = 5, A2 = 5, J = A1 * A2;  // paper: |S| = 10, |A1| = |A2| = 5
constexpr float kDiscount = 0.9f;                    // choice (ERRATA 7), as examples/experiment_settings.hpp
constexpr float kTau = 0.1f;                         // choice: entropy regularization of both agents
constexpr float kIncentiveScale = 0.2f;              // paper: r_x = r + 0.2 sigmoid(x)
constexpr float kIncentiveBound = 10.0f;             // choice: box of x

}  // namespace

int main(int argc, char** argv) {
  long seed;
  const char* out_path;
  if (!model_header::parse_args(argc, argv, "pbrl_generate_model", seed, out_path)) return 2;

  std::vector<float> reward(S * J), transition(S * J * S), designer_reward(S * J), designer_transition(S * J * S);
  std::vector<float> initial(S, 1.0f / S);  // choice: rho uniform
  pbrl::Rng rng(static_cast<std::uint32_t>(seed));
  pbrl::random_reward(rng, reward.data(), S * J);  // paper: uniform [0, 1], dense
  pbrl::random_transition(rng, transition.data(), S * J, S);
  pbrl::random_reward(rng, designer_reward.data(), S * J);
  pbrl::random_transition(rng, designer_transition.data(), S * J, S);

  // The header must hold a model the device accepts: validate it as the firmware will.
  using Problem = pbrl::IncentiveDesign<float, S, A1, A2>;
  const Problem::Data data = model_header::incentive_data<Problem>(
      reward, transition, initial, designer_reward, designer_transition, kDiscount, kTau, kIncentiveScale,
      kIncentiveBound);
  static Problem problem;
  if (!model_header::accepted(problem, data)) return 1;

  std::FILE* out = model_header::open(out_path, "pbrl_generate_model", "examples/firmware/generate_model.cpp", seed);
  if (out == nullptr) return 1;
  std::fprintf(out,
               "// A random incentive-design environment at the paper's size: agents' reward r(s,a1,a2) and\n"
               "// transition P(s'|s,a1,a2), the designer's own reward and transition, uniform rho.\n"
               "// Layout: [(s*A1 + a1)*A2 + a2] for rewards, row (s*A1 + a1)*A2 + a2 of S entries for\n"
               "// transitions. constexpr arrays are read-only data: they stay in flash.\n");
  model_header::write_constants(out, seed, {S, A1, A2, kDiscount, kTau, kIncentiveScale, kIncentiveBound});
  model_header::write_array(out, "kReward", reward);
  model_header::write_array(out, "kTransition", transition);
  model_header::write_array(out, "kDesignerReward", designer_reward);
  model_header::write_array(out, "kDesignerTransition", designer_transition);
  model_header::write_array(out, "kInitial", initial);
  return model_header::close(out, out_path) ? 0 : 1;
}
