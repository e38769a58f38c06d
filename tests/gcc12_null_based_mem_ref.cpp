// The GCC 12 wrong-code case behind the library's -fno-delete-null-pointer-checks (CMakeLists.txt),
// reduced from the sampled estimators' trajectory loop, without the library's headers. No undefined
// behaviour: static arrays, every index in range.
// At -O3, IVOPTs rewrites value[t+1] as a memory reference with a literal null base
// (MEM[0B + off + iv]); late local pure-const then sees a "NULL memory access", stops scanning the
// block and marks accumulate() pure; DCE in the caller deletes the call, and the gradient stays 0.
// -fno-delete-null-pointer-checks turns off that reasoning about null accesses on every target
// (-fno-tree-loop-vectorize only moves IVOPTs' choice: still wrong on AArch64).
// The test builds this file at -O3 with the compile options pbrl::pbrl exports and checks the
// answer: without the workaround it fails with GCC 12 on x86-64 and AArch64.
#include <cmath>
#include <cstdio>
constexpr int S = 4, J = 6, K = 3, H = 64;
struct Traj {
  int horizon;
  int state[H + 1];
  int action1[H];
  int action2[H];
  double value[H + 1];
};
struct Problem {
  double b[S * J * K], c[S * J * K], p0[S * J * S], p1[S * J * S];
  double linear(const double* coef, int sj, const double* x) const {
    double t = 0;
    for (int k = 0; k < K; ++k) t += coef[sj * K + k] * x[k];
    return t;
  }
  void sample_vjp(const double* x, int s, int j, int sn, double rw, double tw, double* grad) const {
    const int sj = s * J + j;
    const double t = std::tanh(linear(b, sj, x));
    const double m = 1 / (1 + std::exp(-linear(c, sj, x)));
    const double q0 = p0[sj * S + sn], q1 = p1[sj * S + sn];
    const double dlog = m * (1 - m) * (q1 - q0) / ((1 - m) * q0 + m * q1);
    const double dr = rw * (1 - t * t), dp = tw * dlog;
    for (int k = 0; k < K; ++k) grad[k] += dr * b[sj * K + k] + dp * c[sj * K + k];
  }
};
template <class P>
void accumulate(const P& p, const double* x, double gamma, const Traj& traj, double w, double* grad) {
  const int n = traj.horizon;
  double d = w;
  for (int t = 0; t < n; ++t) {
    const int j = traj.action1[t] * 3 + traj.action2[t];
    p.sample_vjp(x, traj.state[t], j, traj.state[t + 1], d, d * gamma * traj.value[t + 1], grad);
    d *= gamma;
  }
}
template <class P>
__attribute__((noinline)) int estimate(const P& p, const double* x, const Traj& traj, int batch, double* grad) {
  for (int k = 0; k < K; ++k) grad[k] = 0;
  for (int b = 0; b < batch; ++b) accumulate(p, x, 0.6, traj, 1.0 / batch, grad);
  return std::isfinite(grad[0]) ? 0 : 1;
}
// a second caller so accumulate<Problem> is not simply inlined everywhere
template <class P>
__attribute__((noinline)) void other(const P& p, const double* x, const Traj& traj, double* g) {
  accumulate(p, x, 0.6, traj, 1.0, g);
  accumulate(p, x, 0.6, traj, -0.5, g);
  accumulate(p, x, 0.6, traj, 0.25, g);
}
static Problem prob;
static Traj traj;
int main(int argc, char**) {
  for (int i = 0; i < S * J * K; ++i) { prob.b[i] = 0.01 * (i % 7) - 0.03; prob.c[i] = 0.02 * (i % 5) - 0.04; }
  for (int i = 0; i < S * J * S; ++i) { prob.p0[i] = 0.25; prob.p1[i] = 0.1 + 0.05 * (i % 4); }
  traj.horizon = 48 + argc - 1;
  for (int t = 0; t <= H; ++t) traj.state[t] = t % S;
  for (int t = 0; t < H; ++t) { traj.action1[t] = t % 2; traj.action2[t] = t % 3; }
  for (int t = 0; t <= H; ++t) traj.value[t] = 1.0 + 0.01 * t;
  const double x[K] = {0.3, -0.2, 0.1};
  double g[K], g2[K] = {0, 0, 0};
  estimate(prob, x, traj, 4, g);
  other(prob, x, traj, g2);
  std::printf("grad = %.12g %.12g %.12g  (%s)\n", g[0], g[1], g[2], g[0] == 0 && g[1] == 0 && g[2] == 0 ? "WRONG: all zero" : "ok");
  return g[0] == 0 && g[1] == 0 && g[2] == 0;
}
