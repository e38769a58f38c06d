#pragma once
// What the incentive-design firmware images (firmware/main.cpp, firmware_adaptive/main.cpp) share
// beside the board: the model's data, the banner lines, the simulated power supply and the stack
// depth the run reached.
// Include after the image's generated model header: the functions read its namespace model
// (kReward, kInitial, kDiscount, kTau, kDesignerReward, kDesignerTransition, kIncentiveScale,
// kIncentiveBound, kStates, kActions1, kActions2, kSeed), which both generators write.
// Freestanding: no heap, no exceptions, no stdio.
#include "board.hpp"

#include <pbrl/model/regularizer.hpp>

#include <cstddef>
#include <cstdint>

// From the linker script and startup.c.
extern "C" std::uint32_t __stack_limit, __stack_top;
extern "C" const std::uint32_t firmware_stack_paint;

namespace firmware {

// Sets data to the incentive-design data of the model in flash with the given agents' transition
// (the model's own, or a prior): both agents entropy-regularized with the model's tau, x in the
// model's box.
template <class Data>
void set_model_data(Data& data, const float* transition) {
  data.reward = model::kReward;
  data.transition = transition;
  data.initial = model::kInitial;
  data.discount = model::kDiscount;
  data.regularizer1 = {pbrl::RegularizerKind::entropy, model::kTau, nullptr};
  data.regularizer2 = {pbrl::RegularizerKind::entropy, model::kTau, nullptr};
  data.designer_reward = model::kDesignerReward;
  data.designer_transition = model::kDesignerTransition;
  data.incentive_scale = model::kIncentiveScale;
  data.incentive = {-model::kIncentiveBound, model::kIncentiveBound};
}

// The first line of a run: `title`, then the model's size and seed.
inline void print_model(const char* title) {
  board::Line()
      .text(title)
      .text("incentive design, ")
      .integer(model::kStates)
      .text(" states, ")
      .integer(model::kActions1)
      .text("x")
      .integer(model::kActions2)
      .text(" actions, model seed ")
      .integer(static_cast<long long>(model::kSeed))
      .print();
}

// Appends "checkpoint image <image_bytes> bytes, tick <tick_budget> instructions" to line: what
// both images' banners say of the checkpoint image and the tick.
inline board::Line& checkpoint_and_tick(board::Line& line, std::size_t image_bytes, std::uint32_t tick_budget) {
  return line.text("checkpoint image ")
      .integer(static_cast<long long>(image_bytes))
      .text(" bytes, tick ")
      .integer(tick_budget)
      .text(" instructions");
}

// The same on a line begun here (a temporary, as the banners' other lines are).
inline board::Line& checkpoint_and_tick(board::Line&& line, std::size_t image_bytes, std::uint32_t tick_budget) {
  return checkpoint_and_tick(line, image_bytes, tick_budget);
}

// The simulated supply of a run with a power cut: the bytes the flash can still program before
// power is lost (-1: never). A cut strikes when 3/5 of a checkpoint image has been programmed.
struct Supply {
  long bytes_left = -1;
  // The bytes of an image of image_bytes programmed before the cut.
  static constexpr std::size_t cut_bytes(std::size_t image_bytes) { return image_bytes * 3 / 5; }
  // Power will be lost while the next image of image_bytes is programmed.
  void cut_during(std::size_t image_bytes) { bytes_left = static_cast<long>(cut_bytes(image_bytes)); }
};

// Ends line, the report of a power cut during the programming of an image of image_bytes, with
// "<cut> of <image_bytes> bytes written); rebooting" and prints it.
inline void print_power_cut(board::Line& line, std::size_t image_bytes) {
  line.integer(static_cast<long long>(Supply::cut_bytes(image_bytes)))
      .text(" of ")
      .integer(static_cast<long long>(image_bytes))
      .text(" bytes written); rebooting")
      .print();
}

// Deepest stack use: painted words the run never overwrote, counted from the low end.
inline std::size_t stack_used() {
  const std::uint32_t* p = &__stack_limit;
  while (p < &__stack_top && *p == firmware_stack_paint) ++p;
  return static_cast<std::size_t>(reinterpret_cast<const char*>(&__stack_top) - reinterpret_cast<const char*>(p));
}

// The line that reports the deepest stack use, printed after the runs.
inline void print_stack_used() {
  board::Line().text("stack: deepest use ").integer(static_cast<long long>(stack_used())).text(" bytes").print();
}

}  // namespace firmware
