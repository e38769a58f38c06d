#pragma once
// The build machine's stand-in for examples/firmware/board.hpp, so that main.cpp also runs on the
// host (its output is reference.txt): the same calls, printed with printf, whose "%.8e" is the
// text the firmware's Line::real imitates.
#include <cstdio>

namespace board {

class Line {
 public:
  Line& text(const char* s) {
    std::fputs(s, stdout);
    return *this;
  }
  Line& integer(long long v) {
    std::printf("%lld", v);
    return *this;
  }
  Line& real(float v) {
    std::printf("%.8e", static_cast<double>(v));
    return *this;
  }
  void print() { std::putchar('\n'); }
};

}  // namespace board
