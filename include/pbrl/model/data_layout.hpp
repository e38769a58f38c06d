#pragma once
// The layout of a problem's Data, as its visit() states it once per field (model_digest.hpp):
//   v(array, layout::Table<Axes...>{}, name)   and Transition, Initial, OptionalTable: the axes in
//                                              row-major order and how init() checks the rows
//   v(regularizer, ActionAxis{}, name)         a Regularizer over (states, that axis)
//   v(scalar, name), v(box, name)
// Every argument but the field is an empty type: a visit costs what its visitor does with the
// field (the digest reads the constant `length`); the layout itself is for the host tools, which
// read a manifest by it (tools/codegen/kinds.cpp).

#include <cstddef>

namespace pbrl {
namespace layout {

/// One of a problem's sizes: its position among the class template's int parameters (after
/// Scalar) and its value. A problem derives one struct per size that adds `name`, the size's
/// manifest key (tools/codegen), or uses States and Actions below.
template <int Position, int Extent>
struct Axis {
  static constexpr int position = Position;  ///< among the problem template's int parameters
  static constexpr int extent = Extent;      ///< the size
};

/// S, the number of states, a problem's first size.
template <int S>
struct States : Axis<0, S> {
  static constexpr const char* name = "states";  ///< its key in a pbrl-codegen manifest
};

/// A, the number of actions: a single-agent problem's second size.
template <int A>
struct Actions : Axis<1, A> {
  static constexpr const char* name = "actions";  ///< its key in a pbrl-codegen manifest
};

/// What init() checks of an array's rows, beyond every entry finite.
enum class Rows : unsigned char {
  none,        ///< nothing more (rewards, costs)
  transition,  ///< each row over the last axis, the next state: entries >= 0, sum to one
  initial,     ///< the one row, over states: entries > 0, sum to one
};

/// Whether init() refuses a nullptr for the array.
enum class Presence : unsigned char {
  required,  ///< init() refuses a nullptr
  optional,  ///< nullptr: absent, with the meaning the member's brief gives
};

/// An array of a problem's Data: its axes in row-major order, its row check and its presence.
template <Rows R, Presence P, class... Axes>
struct Array {
  static_assert(sizeof...(Axes) > 0, "an array has at least one axis");
  static constexpr Rows rows = R;                    ///< what init() checks of its rows
  static constexpr Presence presence = P;            ///< whether it may be nullptr
  /// Its entry count, the product of its axes' extents.
  static constexpr std::size_t length = (std::size_t(1) * ... * std::size_t(Axes::extent));
};

/// A required array with no row check (rewards, costs).
template <class... Axes>
using Table = Array<Rows::none, Presence::required, Axes...>;
/// An array that may be nullptr, with no row check.
template <class... Axes>
using OptionalTable = Array<Rows::none, Presence::optional, Axes...>;
/// Transition probabilities: each row over the last axis a distribution.
template <class... Axes>
using Transition = Array<Rows::transition, Presence::required, Axes...>;
/// The initial distribution over states: entries > 0, summing to one.
template <class States>
using Initial = Array<Rows::initial, Presence::required, States>;

}  // namespace layout
}  // namespace pbrl
