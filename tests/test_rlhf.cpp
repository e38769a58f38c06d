// Tabular RLHF (paper, Section 2.2 "RLHF", Remark "Connection with DPO", Section "Simulation / Deep
// RL from human feedback"): the preference ring buffer, segment sampling, the synthetic labelers,
// the Bradley-Terry loss and its gradient, the penalties' x-gradients on this problem (ERRATA item
// 3), the DPO special case, and PBRL against the DRLHF baseline and the oracle on a random MDP.
#include "fd_support.hpp"
#include "support.hpp"

#include "pbrl/baselines/drlhf.hpp"
#include "pbrl/problems/rlhf.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

// Sets the RLHF counts near their saturation (the classes' friend; only tests define it).
struct pbrl::detail::RlhfCountsAccess {
  template <class Buffer>
  static void set_pushed(Buffer& b, std::int64_t n) { b.pushed_ = n; }
  template <class Sampler>
  static void set_steps(Sampler& s, std::int64_t n) { s.steps_ = n; }
};

namespace test_rlhf {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
using pbrl::Label;

// |count - N p| within z standard errors of a binomial(N, p) count. p = 0 demands count = 0.
constexpr Real kZ = Real(4.5);  // two-sided 4.5 sigma: about 7e-6 per cell by the normal tail
bool within_binomial(long count, long n, Real p) {
  const Real mean = Real(n) * p;
  const Real sd = std::sqrt(Real(n) * p * (Real(1) - p));
  return std::abs(Real(count) - mean) <= kZ * sd + Real(1e-3);
}

template <int S, int A, int L>
pbrl::Segment<S, A, L> make_segment(std::initializer_list<std::pair<int, int>> pairs) {
  pbrl::Segment<S, A, L> d;
  for (const auto& p : pairs) REQUIRE(d.push_back(p.first, p.second) == Status::ok);
  return d;
}

template <int S, int A, int L>
bool same_segment(const pbrl::Segment<S, A, L>& a, const pbrl::Segment<S, A, L>& b) {
  if (a.length != b.length) return false;
  for (int t = 0; t < a.length; ++t)
    if (a.state[t] != b.state[t] || a.action[t] != b.action[t]) return false;
  return true;
}

bool same_rng(const pbrl::Rng& a, const pbrl::Rng& b) { return std::memcmp(a.state(), b.state(), 16) == 0; }

// A labeler that answers a fixed value (for the refusal paths).
Label constant_label(void* context, const pbrl::Segment<4, 3, 3>&, const pbrl::Segment<4, 3, 3>&) {
  return *static_cast<const Label*>(context);
}
}  // namespace

TEST_CASE("preference buffer: capacity, overwrite order, count, validation") {
  constexpr int S = 4, A = 3, L = 3, C = 4;
  using Buffer = pbrl::PreferenceBuffer<S, A, L, C>;
  using Seg = pbrl::Segment<S, A, L>;
  auto buffer = std::make_unique<Buffer>();
  CHECK(Buffer::capacity() == C);
  CHECK(buffer->empty());
  // Pair i: d0 starts in state i % S with action i % A, label i / 8.
  auto pair = [](int i) { return make_segment<S, A, L>({{i % S, i % A}, {(i + 1) % S, 0}}); };
  for (int i = 0; i < 6; ++i) {
    REQUIRE(buffer->push(pair(i), pair(i + 1), Label(i) / Label(8)) == Status::ok);
    CHECK(buffer->size() == std::min(i + 1, C));
    CHECK(buffer->pushed() == i + 1);
    CHECK(buffer->full() == (i + 1 >= C));
    CHECK(same_segment(buffer->newest().first, pair(i)));
  }
  // Oldest first: pairs 2, 3, 4, 5 remain.
  for (int k = 0; k < C; ++k) {
    const int i = k + 2;
    CHECK(same_segment((*buffer)[k].first, pair(i)));
    CHECK(same_segment((*buffer)[k].second, pair(i + 1)));
    CHECK((*buffer)[k].label == Label(i) / Label(8));
  }

  // Refusals change nothing.
  const auto before = std::make_unique<Buffer>(*buffer);
  auto unchanged = [&] {
    if (buffer->size() != before->size() || buffer->pushed() != before->pushed()) return false;
    for (int k = 0; k < buffer->size(); ++k) {
      const auto &p = (*buffer)[k], &q = (*before)[k];
      if (!same_segment(p.first, q.first) || !same_segment(p.second, q.second) || p.label != q.label) return false;
    }
    return true;
  };
  const Seg good = pair(0);
  CHECK(buffer->push(good, good, std::numeric_limits<Label>::quiet_NaN()) == Status::not_finite);
  CHECK(buffer->push(good, good, std::numeric_limits<Label>::infinity()) == Status::not_finite);
  CHECK(buffer->push(good, good, Label(-0.01)) == Status::out_of_bounds);
  CHECK(buffer->push(good, good, Label(1.01)) == Status::out_of_bounds);
  Seg empty;
  CHECK(buffer->push(empty, good, Label(1)) == Status::bad_setting);
  Seg bad_state = good;
  bad_state.state[1] = S;
  CHECK(buffer->push(good, bad_state, Label(1)) == Status::out_of_bounds);
  Seg bad_action = good;
  bad_action.action[0] = A;
  CHECK(buffer->push(bad_action, good, Label(0)) == Status::out_of_bounds);
  Seg too_long = good;
  too_long.length = L + 1;
  CHECK(buffer->push(good, too_long, Label(0)) == Status::bad_setting);
  CHECK(unchanged());

  // Segment building: T + 1 pairs, at most MaxLen.
  Seg d;
  CHECK(d.push_back(S, 0) == Status::out_of_bounds);
  CHECK(d.push_back(0, -1) == Status::out_of_bounds);
  for (int t = 0; t < L; ++t) CHECK(d.push_back(t, t % A) == Status::ok);
  CHECK(d.push_back(0, 0) == Status::bad_setting);
  CHECK(d.length == L);
  CHECK(d.horizon() == L - 1);
  CHECK(sizeof(Seg::Index) == 1);

  buffer->clear();
  CHECK(buffer->empty());
  CHECK(buffer->pushed() == 0);
  // Soft labels and the boundary labels are accepted.
  CHECK(buffer->push(good, good, Label(0)) == Status::ok);
  CHECK(buffer->push(good, good, Label(1)) == Status::ok);
  CHECK(buffer->push(good, good, Label(0.3)) == Status::ok);
  CHECK(buffer->size() == 3);
}

TEST_CASE("RLHF counts are 64-bit and never overflow: a count with no room is refused, nothing changes") {
  constexpr int S = 4, A = 3, L = 3;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  static_assert(sizeof(decltype(std::declval<pbrl::PreferenceBuffer<S, A, L, 2>&>().pushed())) == 8, "64-bit");
  static_assert(sizeof(decltype(std::declval<pbrl::SegmentSampler<Real, S, A>&>().steps())) == 8, "64-bit");
  RandomModel<S, A> env(5);
  pbrl::SegmentSampler<Real, S, A> sampler;
  REQUIRE(sampler.init(env.transition, env.initial, 3u, 2) == Status::ok);
  auto buffer = std::make_unique<pbrl::PreferenceBuffer<S, A, L, 2>>();
  const Mat<S, A> pi = Mat<S, A>::Constant(Real(1) / A);
  pbrl::Segment<S, A, L> d;
  // Room for exactly one segment (burn-in 2 + length 3 steps): it is drawn, the next is refused.
  pbrl::detail::RlhfCountsAccess::set_steps(sampler, kMax - 5);
  REQUIRE(sampler.sample(pi, L, d) == Status::ok);
  CHECK(sampler.steps() == kMax);
  const pbrl::Segment<S, A, L> kept = d;
  const pbrl::Rng rng = sampler.rng();
  CHECK(sampler.sample(pi, 1, d) == Status::count_overflow);
  CHECK(sampler.steps() == kMax);
  CHECK(same_rng(sampler.rng(), rng));
  CHECK(same_segment(d, kept));
  // One segment's room but not two: collect_pair refuses and leaves the count, the Rng and the buffer.
  pbrl::detail::RlhfCountsAccess::set_steps(sampler, kMax - 7);
  pbrl::ReturnLabeler<Real, S, A> labeler{env.reward};
  CHECK(sampler.collect_pair(pi, L, labeler.labeler<L>(), *buffer) == Status::count_overflow);
  CHECK(sampler.steps() == kMax - 7);
  CHECK(same_rng(sampler.rng(), rng));
  CHECK(buffer->size() == 0);

  // The buffer's count: room for one more push, then count_overflow with the buffer unchanged.
  pbrl::detail::RlhfCountsAccess::set_pushed(*buffer, kMax - 1);
  REQUIRE(buffer->push(kept, kept, Label(0.25)) == Status::ok);
  CHECK(buffer->pushed() == kMax);
  CHECK(buffer->size() == 1);
  CHECK(buffer->push(kept, kept, Label(0.75)) == Status::count_overflow);
  CHECK(buffer->pushed() == kMax);
  CHECK(buffer->size() == 1);
  CHECK(buffer->newest().label == Label(0.25));
}

TEST_CASE("segment sampling is deterministic and follows rho, pi and P") {
  constexpr int S = 3, A = 2, L = 4;
  using Sampler = pbrl::SegmentSampler<Real, S, A>;
  // P with zeros (never-taken transitions), pi with a zero (never-taken action).
  const Real transition[S * A * S] = {0.5, 0.5, 0,    0, 0.2, 0.8,   //
                                      1,   0,   0,    0.3, 0.3, 0.4,  //
                                      0,   0.6, 0.4,  0.1, 0, 0.9};
  const Real initial[S] = {0.2, 0.5, 0.3};
  Mat<S, A> pi;
  pi << 0.7, 0.3,  //
      0, 1,        //
      0.45, 0.55;

  auto a = std::make_unique<Sampler>();
  auto b = std::make_unique<Sampler>();
  pbrl::Segment<S, A, L> da, db;
  CHECK(a->sample(pi, 2, da) == Status::not_initialized);
  REQUIRE(a->init(transition, initial, 7u) == Status::ok);
  REQUIRE(b->init(transition, initial, 7u) == Status::ok);
  for (int i = 0; i < 50; ++i) {
    REQUIRE(a->sample(pi, 1 + i % L, da) == Status::ok);
    REQUIRE(b->sample(pi, 1 + i % L, db) == Status::ok);
    CHECK(same_segment(da, db));
    CHECK(da.length == 1 + i % L);
  }
  long expected_steps = 0;
  for (int i = 0; i < 50; ++i) expected_steps += 1 + i % L;
  CHECK(a->steps() == expected_steps);
  REQUIRE(b->init(transition, initial, 8u) == Status::ok);
  REQUIRE(a->init(transition, initial, 7u) == Status::ok);
  CHECK(a->steps() == 0);
  int differences = 0;
  for (int i = 0; i < 20; ++i) {
    REQUIRE(a->sample(pi, L, da) == Status::ok);
    REQUIRE(b->sample(pi, L, db) == Status::ok);
    differences += same_segment(da, db) ? 0 : 1;
  }
  CHECK(differences > 0);

  // Refusals leave the segment, the Rng and the step count as they were.
  const pbrl::Rng rng_before = a->rng();
  const long steps_before = a->steps();
  const auto d_before = da;
  CHECK(a->sample(pi, 0, da) == Status::bad_setting);
  CHECK(a->sample(pi, L + 1, da) == Status::bad_setting);
  Mat<S, A> bad = pi;
  bad(1, 0) = Real(0.5);
  CHECK(a->sample(bad, 2, da) == Status::bad_policy);
  CHECK(same_rng(a->rng(), rng_before));
  CHECK(a->steps() == steps_before);
  CHECK(same_segment(da, d_before));
  Real bad_transition[S * A * S];
  std::memcpy(bad_transition, transition, sizeof(transition));
  bad_transition[0] = Real(0.6);
  CHECK(a->init(bad_transition, initial, 1u) == Status::bad_transition);
  CHECK(a->init(transition, initial, 1u, -1) == Status::bad_setting);
  CHECK(same_rng(a->rng(), rng_before));

  // Joint frequencies of (s0, a0, s1, a1) against rho(s0) pi(a0|s0) P(s1|s0,a0) pi(a1|s1), each cell
  // within kZ binomial standard errors; zero-probability cells must be empty.
  constexpr long N = 20000;
  auto check_joint = [&](int burn_in, const Vec<S>& start) {
    CAPTURE(burn_in);
    REQUIRE(a->init(transition, initial, 99u + burn_in, burn_in) == Status::ok);
    long count[S][A][S][A] = {};
    long refused = 0;
    for (long n = 0; n < N; ++n) {
      refused += a->sample(pi, 2, da) == Status::ok ? 0 : 1;
      ++count[da.state[0]][da.action[0]][da.state[1]][da.action[1]];
    }
    REQUIRE(refused == 0);
    CHECK(a->steps() == N * (2 + burn_in));
    int failures = 0;
    for (int s0 = 0; s0 < S; ++s0)
      for (int a0 = 0; a0 < A; ++a0)
        for (int s1 = 0; s1 < S; ++s1)
          for (int a1 = 0; a1 < A; ++a1) {
            const Real p = start(s0) * pi(s0, a0) * transition[(s0 * A + a0) * S + s1] * pi(s1, a1);
            if (!within_binomial(count[s0][a0][s1][a1], N, p)) ++failures;
          }
    CHECK(failures == 0);
  };
  const Vec<S> rho = Eigen::Map<const Vec<S>>(initial);
  check_joint(0, rho);
  // burn_in = 2: the segment starts at s_2 of a rollout, distributed as rho^T P_pi^2.
  Eigen::Matrix<Real, S, S> P_pi = Eigen::Matrix<Real, S, S>::Zero();
  for (int s = 0; s < S; ++s)
    for (int act = 0; act < A; ++act)
      for (int t = 0; t < S; ++t) P_pi(s, t) += pi(s, act) * transition[(s * A + act) * S + t];
  const Vec<S> start2 = (rho.transpose() * P_pi * P_pi).transpose();
  check_joint(2, start2);
}

TEST_CASE("labelers: higher true return wins; Bradley-Terry rate is sigma(R0 - R1)") {
  constexpr int S = 4, A = 3, L = 3;
  using Seg = pbrl::Segment<S, A, L>;
  Real reward[S * A] = {};
  reward[0 * A + 0] = Real(0.1);
  reward[1 * A + 1] = Real(0.2);
  reward[2 * A + 2] = Real(0.3);
  reward[3 * A + 0] = Real(0.9);
  pbrl::ReturnLabeler<Real, S, A> higher{reward};
  const Seg x = make_segment<S, A, L>({{0, 0}, {1, 1}, {2, 2}});  // 0.6
  const Seg y = make_segment<S, A, L>({{2, 2}, {1, 1}, {0, 0}});  // the same pairs, summed in another order
  const Seg z = make_segment<S, A, L>({{3, 0}});                  // 0.9, T = 0
  const Seg w = make_segment<S, A, L>({{1, 0}, {2, 0}});          // 0
  CHECK(higher(z, x) == Label(1));
  CHECK(higher(x, z) == Label(0));
  CHECK(higher(x, w) == Label(1));
  CHECK(higher(x, y) == Label(0.5));
  CHECK(higher(y, x) == Label(0.5));
  CHECK(higher(w, w) == Label(0.5));
  // Through the plain function pointer.
  const auto fn = higher.labeler<L>();
  CHECK(fn.function(fn.context, z, w) == Label(1));

  // Bradley-Terry: the empirical rate of "d0 preferred" within kZ binomial standard errors.
  pbrl::BradleyTerryLabeler<Real, S, A> bt{reward, Real(1), pbrl::Rng(5u)};
  const Seg hi = make_segment<S, A, L>({{3, 0}, {3, 0}, {2, 2}});  // 2.1
  const Seg lo = make_segment<S, A, L>({{0, 0}, {1, 1}});          // 0.3
  for (Real scale : {Real(1), Real(0.4)}) {
    bt.scale = scale;
    const Real expected = Real(1) / (Real(1) + std::exp(-scale * Real(1.8)));
    CHECK_CLOSE(bt.probability(hi, lo), expected, kTight, Real(1));
    constexpr long N = 20000;
    long wins = 0, wins_swapped = 0, other = 0;
    const auto f = bt.labeler<L>();
    for (long n = 0; n < N; ++n) {
      const Label l = f.function(f.context, hi, lo);
      wins += l == Label(1) ? 1 : 0;
      other += l == Label(0) || l == Label(1) ? 0 : 1;
      wins_swapped += bt(lo, hi) == Label(1) ? 1 : 0;
    }
    CHECK(other == 0);  // hard labels only
    CHECK(within_binomial(wins, N, expected));
    CHECK(within_binomial(wins_swapped, N, Real(1) - expected));
  }
  // Deterministic stream: the same seed gives the same labels.
  pbrl::BradleyTerryLabeler<Real, S, A> bt1{reward, Real(1), pbrl::Rng(11u)}, bt2{reward, Real(1), pbrl::Rng(11u)};
  for (int n = 0; n < 100; ++n) CHECK(bt1(hi, x) == bt2(hi, x));

  // collect_pair: both segments from the sampler, the label from the labeler; a refused label
  // pushes nothing and leaves the sampler's Rng and step count as they were.
  RandomModel<S, A> env(3);
  pbrl::SegmentSampler<Real, S, A> sampler;
  REQUIRE(sampler.init(env.transition, env.initial, 21u) == Status::ok);
  auto buffer = std::make_unique<pbrl::PreferenceBuffer<S, A, L, 8>>();
  const Mat<S, A> pi = Mat<S, A>::Constant(Real(1) / A);
  REQUIRE(sampler.collect_pair(pi, L, higher.labeler<L>(), *buffer) == Status::ok);
  CHECK(buffer->size() == 1);
  CHECK(sampler.steps() == 2 * L);
  CHECK(buffer->newest().label == higher(buffer->newest().first, buffer->newest().second));
  Label bad_label = Label(2);
  const pbrl::Labeler<S, A, L> bad{&constant_label, &bad_label};
  const pbrl::Rng rng_before = sampler.rng();
  CHECK(sampler.collect_pair(pi, L, bad, *buffer) == Status::out_of_bounds);
  bad_label = std::numeric_limits<Label>::quiet_NaN();
  CHECK(sampler.collect_pair(pi, L, bad, *buffer) == Status::not_finite);
  CHECK(sampler.collect_pair(pi, L, pbrl::Labeler<S, A, L>{}, *buffer) == Status::null_pointer);
  CHECK(buffer->size() == 1);
  CHECK(sampler.steps() == 2 * L);
  CHECK(same_rng(sampler.rng(), rng_before));
  pbrl::ReturnLabeler<Real, S, A> no_reward{};
  CHECK(sampler.collect_pair(pi, L, no_reward.labeler<L>(), *buffer) == Status::not_finite);
  CHECK(buffer->size() == 1);
}

namespace {
// A small RLHF instance: a random environment with a hidden true reward and a preference buffer.
template <int S, int A, int L, int C>
struct RlhfInstance {
  using Problem = pbrl::RlhfProblem<Real, S, A, L, C>;
  RandomModel<S, A> env;  // env.reward is the hidden true reward
  pbrl::PreferenceBuffer<S, A, L, C> buffer;
  Problem problem;
  typename Problem::Data data;

  RlhfInstance(std::uint32_t seed, Real gamma, Real tau, Real bound,
               pbrl::RegularizerKind kind = pbrl::RegularizerKind::entropy)
      : env(seed, Real(0.5)) {
    data.transition = env.transition;
    data.initial = env.initial;
    data.discount = gamma;
    data.lower = {kind, tau, env.reference};
    data.reward = {-bound, bound};
    data.preferences = &buffer;
    REQUIRE(problem.init(data) == Status::ok);
  }
  pbrl::Mdp<Real, S, A> truth(Real tau) const { return env.mdp(data.discount, tau, data.lower.kind); }
};
}  // namespace

TEST_CASE("Bradley-Terry loss: exact gradient, and gradient descent fits the labels") {
  constexpr int S = 4, A = 3, L = 3, C = 64;
  using Inst = RlhfInstance<S, A, L, C>;
  using Params = Inst::Problem::Params;
  auto inst = std::make_unique<Inst>(31, Real(0.9), Real(0.2), Real(10));
  // Segments from a random policy; soft labels from a Bradley-Terry model of a reward r*, so the
  // loss's infimum is attained at x = r* (+ any constant: all segments have the same length) and
  // equals the mean binary entropy of the labels.
  pbrl::Rng rng(32);
  const Mat<S, A> pi = random_policy<S, A>(rng);
  Real target[S * A];
  for (auto& r : target) r = Real(2) * rng.uniform<Real>() - Real(1);
  pbrl::BradleyTerryLabeler<Real, S, A> model{target};
  pbrl::SegmentSampler<Real, S, A> sampler;
  REQUIRE(sampler.init(inst->env.transition, inst->env.initial, 33u) == Status::ok);
  pbrl::Segment<S, A, L> d0, d1;
  Real entropy(0);
  for (int i = 0; i < C; ++i) {
    REQUIRE(sampler.sample(pi, L, d0) == Status::ok);
    REQUIRE(sampler.sample(pi, L, d1) == Status::ok);
    const Label l = Label(model.probability(d0, d1));
    REQUIRE(inst->buffer.push(d0, d1, l) == Status::ok);
    const Real p = Real(l);
    entropy -= (p * std::log(p) + (Real(1) - p) * std::log1p(-p)) / Real(C);
  }

  auto f_at = [&](const Params& x, Params* grad) {
    Real f(0);
    Params g;
    REQUIRE(inst->problem.loss(x, f, g) == Status::ok);
    if (grad != nullptr) *grad = g;
    return f;
  };
  Params x;
  for (int k = 0; k < S * A; ++k) x(k) = Real(2) * rng.uniform<Real>() - Real(1);
  for (Real l2 : {Real(0), Real(0.3)}) {
    CAPTURE(l2);
    inst->data.l2 = l2;
    REQUIRE(inst->problem.init(inst->data) == Status::ok);
    Params g;
    const Real f = f_at(x, &g);
    check_parameter_gradient(x, g, [&](const Params& xh) { return f_at(xh, nullptr); });
    // upper() is the same f with grad_pi = 0 (the buffer is data).
    auto model_storage = std::make_unique<Inst::Problem::Model>();
    auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
    pbrl::Evaluation<Real, S, A> scratch;
    pbrl::Mdp<Real, S, A> m;
    REQUIRE(inst->problem.build(x, *model_storage, m) == Status::ok);
    CHECK(Eigen::Map<const Params>(m.reward) == x);
    Real fu;
    Params gu;
    Mat<S, A> gpi = Mat<S, A>::Constant(Real(7));
    REQUIRE(inst->problem.upper(pi, *model_storage, *ws, scratch, fu, gu, gpi) == Status::ok);
    CHECK(fu == f);
    CHECK(gu == g);
    CHECK(gpi.cwiseAbs().maxCoeff() == Real(0));
    // x comes from the model (r_x = x): upper() reads the x build() was given, and nothing before init.
    const Inst::Problem fresh;
    Real fn = Real(-42.5);
    CHECK(fresh.upper(pi, *model_storage, *ws, scratch, fn, gu, gpi) == Status::not_initialized);
    CHECK(fn == Real(-42.5));
  }
  // J^T(w, v) = w, and per sample grad_x r_x(s,a) = e_{(s,a)} with no transition term.
  Params acc = Params::Zero();
  const Mat<S, A> w = random_policy<S, A>(rng);
  auto built = std::make_unique<Inst::Problem::Model>();
  {
    pbrl::Mdp<Real, S, A> m;
    REQUIRE(inst->problem.build(x, *built, m) == Status::ok);
  }
  inst->problem.vjp(*built, w, Vec<S>::Constant(Real(3)), Real(2), acc);
  CHECK(acc == Real(2) * Eigen::Map<const Params>(w.data()));
  acc.setZero();
  inst->problem.sample_vjp(*built, {2, 1, 0, Real(0.5), Real(9)}, acc);
  CHECK(acc(2 * A + 1) == Real(0.5));
  CHECK(acc.cwiseAbs().sum() == Real(0.5));
  inst->data.l2 = Real(0);
  REQUIRE(inst->problem.init(inst->data) == Status::ok);

  // Gradient descent from 0 with step 1/L_f, L_f = max_i |n0_i - n1_i|^2 / 4 <= (2 L)^2 / 4: the
  // loss never increases and approaches the entropy; the model's preference probabilities approach
  // the labels.
  const Real step = Real(1) / Real(L * L);
  Params xk = Params::Zero(), g;
  Real previous = f_at(xk, &g);
  CHECK(previous == doctest::Approx(std::log(Real(2))).epsilon(kTight));
  const Real initial_excess = previous - entropy;
  bool monotone = true;
  for (int k = 0; k < 1000; ++k) {
    xk -= step * g;
    const Real f = f_at(xk, &g);
    monotone = monotone && f <= previous + kTight;
    previous = f;
  }
  CHECK(monotone);
  CHECK(previous - entropy >= -kTight);
  CHECK(previous - entropy <= Real(1e-3) * initial_excess);
  Real worst(0);
  for (int i = 0; i < inst->buffer.size(); ++i) {
    const auto& p = inst->buffer[i];
    const Real z = pbrl::segment_return(xk.data(), p.first) - pbrl::segment_return(xk.data(), p.second);
    worst = std::max(worst, std::abs(Real(1) / (Real(1) + std::exp(-z)) - Real(p.label)));
  }
  CHECK(worst <= Real(0.02));

  // Stability far out: huge returns give a finite loss (softplus, not log(sigmoid)).
  Real loss_far(0);
  const Params far = Params::Constant(Real(10)) - Real(20) * Eigen::Map<const Params>(target).cwiseAbs();
  REQUIRE(inst->problem.loss(far.cwiseMax(Real(-10)), loss_far, g) == Status::ok);
  CHECK(std::isfinite(loss_far));
  CHECK(g.allFinite());
}

TEST_CASE("value and Bellman penalty x-gradients on RLHF (ERRATA item 3)") {
  // With pi-hat = pi*(x) exact, the penalties' x-gradients through J^T = identity are the
  // occupancy differences of the paper's Lemmas; the Bellman one starts with a_0 ~ pi_y, then
  // follows pi* (ERRATA item 3). Checked against central differences of p(x, y) in x.
  constexpr int S = 4, A = 3, L = 2, C = 4;
  using Inst = RlhfInstance<S, A, L, C>;
  using Params = Inst::Problem::Params;
  auto inst = std::make_unique<Inst>(35, Real(0.8), Real(0.3), Real(2));
  auto model = std::make_unique<Inst::Problem::Model>();
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
  pbrl::Rng rng(36);
  const Mat<S, A> pi_y = random_policy<S, A>(rng);
  Params x;
  for (int k = 0; k < S * A; ++k) x(k) = Real(2) * rng.uniform<Real>() - Real(1);
  for (auto kind : {pbrl::PenaltyKind::value, pbrl::PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    auto penalty = [&](const Params& xp, Params* gx) {
      pbrl::Mdp<Real, S, A> m;
      REQUIRE(inst->problem.build(xp, *model, m) == Status::ok);
      const auto opt = optimum(m);
      pbrl::Evaluation<Real, S, A> ey, eh;
      REQUIRE(pbrl::evaluate(m, pi_y, *ws, ey) == Status::ok);
      REQUIRE(pbrl::evaluate(m, opt.pi, *ws, eh) == Status::ok);
      Params dx = Params::Zero();
      Mat<S, A> dpi = Mat<S, A>::Zero(), weights;
      Real p;
      if (kind == pbrl::PenaltyKind::value) {
        p = pbrl::value_penalty(inst->problem, *model, m, pbrl::PolicyY{pi_y, ey}, pbrl::PolicyHat{opt.pi, eh}, Real(1), weights, {dx, dpi});
      } else {
        Vec<S> warm = Vec<S>::Zero();
        Mat<S, A> start;
        REQUIRE(pbrl::occupancy_from_start(m, {pi_y, opt.pi}, *ws, warm, start, true) == Status::ok);
        p = pbrl::bellman_penalty(inst->problem, *model, m, pbrl::PolicyY{pi_y}, pbrl::PolicyHat{opt.pi, eh}, start, Real(1), weights, {dx, dpi});
      }
      if (gx != nullptr) *gx = dx;
      return p;
    };
    Params gx;
    CHECK(penalty(x, &gx) > Real(0));
    check_parameter_gradient(x, gx, [&](const Params& xh) { return penalty(xh, nullptr); });
  }
}

TEST_CASE("Remark 'Connection with DPO': gamma = 0, T = 0, KL to pi_ref") {
  // The lower-level optimum is pi_ref * exp(r_x / tau) / Z, i.e.
  //   r_x(s,a) = tau log(pi(a|s) / pi_ref(a|s)) + tau log Z(s),  Z(s) = sum_a pi_ref(a|s) exp(r_x(s,a)/tau),
  // for soft value iteration and for PMD's limit; and on single-pair segments sharing a state the
  // Bradley-Terry loss of r_x equals the DPO loss of that policy.
  constexpr int S = 4, A = 3, L = 1, C = 16;
  using Inst = RlhfInstance<S, A, L, C>;
  using Params = Inst::Problem::Params;
  const Real tau = Real(0.5);
  auto inst = std::make_unique<Inst>(37, Real(0), tau, Real(2), pbrl::RegularizerKind::kl_reference);
  pbrl::Rng rng(38);
  Params x;
  for (int k = 0; k < S * A; ++k) x(k) = Real(4) * rng.uniform<Real>() - Real(2);
  auto model = std::make_unique<Inst::Problem::Model>();
  pbrl::Mdp<Real, S, A> m;
  REQUIRE(inst->problem.build(x, *model, m) == Status::ok);
  const Mat<S, A> ref = Eigen::Map<const Mat<S, A>>(inst->env.reference);
  const Mat<S, A> r = Eigen::Map<const Mat<S, A>>(x.data());

  Mat<S, A> closed_form;
  Vec<S> log_z;
  for (int s = 0; s < S; ++s) {
    log_z(s) = std::log((ref.row(s).array() * (r.row(s).array() / tau).exp()).sum());
    closed_form.row(s) = (ref.row(s).array() * (r.row(s).array() / tau - log_z(s)).exp()).matrix();
  }
  // Soft value iteration: with gamma = 0 one sweep is exact.
  const auto opt = optimum(m);
  CHECK((opt.pi - closed_form).cwiseAbs().maxCoeff() <= kTight);
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a)
      CHECK_CLOSE(r(s, a), tau * std::log(opt.pi(s, a) / ref(s, a)) + tau * log_z(s), kTight * Real(10), Real(2));
  // PMD from the uniform policy: with gamma = 0, log pi_k - log pi* shrinks by 1/(1 + eta*tau) a step.
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, S, A> eval;
  Mat<S, A> pi = Mat<S, A>::Constant(Real(1) / A), log_pi = pi.array().log().matrix();
  const Real eta = Real(4);  // contraction 1/3 per step
  for (int k = 0; k < 40; ++k) REQUIRE(pbrl::pmd_step(m, eta, *ws, eval, {log_pi, pi}) == Status::ok);
  CHECK((pi - closed_form).cwiseAbs().maxCoeff() <= kTight);
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a)
      CHECK_CLOSE(r(s, a), tau * (log_pi(s, a) - std::log(ref(s, a))) + tau * log_z(s), kTight * Real(10),
                  Real(2));

  // Plugging r = tau log(pi/pi_ref) + tau log Z into the loss: log Z cancels between two single
  // pairs in the same state, leaving the DPO objective of pi.
  for (int i = 0; i < C; ++i) {
    const int s = int(rng.below(S));
    const int a0 = int(rng.below(A));
    const int a1 = (a0 + 1 + int(rng.below(A - 1))) % A;
    const Label l = i % 3 == 0 ? Label(0.5) : Label(rng.below(2));
    REQUIRE(inst->buffer.push(make_segment<S, A, L>({{s, a0}}), make_segment<S, A, L>({{s, a1}}), l) == Status::ok);
  }
  Real bt(0);
  Params g;
  REQUIRE(inst->problem.loss(x, bt, g) == Status::ok);
  Real dpo(0);
  for (int i = 0; i < C; ++i) {
    const auto& p = inst->buffer[i];
    const int s = p.first.state[0], a0 = p.first.action[0], a1 = p.second.action[0];
    const Real margin = tau * (std::log(opt.pi(s, a0) / ref(s, a0)) - std::log(opt.pi(s, a1) / ref(s, a1)));
    const Real l0 = Real(p.label);
    dpo += -(l0 * std::log(Real(1) / (Real(1) + std::exp(-margin))) +
             (Real(1) - l0) * std::log(Real(1) / (Real(1) + std::exp(margin)))) /
           Real(C);
  }
  CHECK_CLOSE(bt, dpo, kTight * Real(10), Real(1));
}

TEST_CASE("RlhfProblem, RlhfOracle and Drlhf validate their inputs and change nothing on error") {
  constexpr int S = 4, A = 3, L = 2, C = 4;
  using Inst = RlhfInstance<S, A, L, C>;
  using Problem = Inst::Problem;
  auto inst = std::make_unique<Inst>(39, Real(0.9), Real(0.1), Real(1));
  Problem fresh;
  Problem::Params x = Problem::Params::Zero();
  CHECK(fresh.validate_parameters(x) == Status::not_initialized);
  auto data = inst->data;
  data.preferences = nullptr;
  CHECK(fresh.init(data) == Status::null_pointer);
  data = inst->data;
  data.reward = {Real(1), Real(-1)};
  CHECK(fresh.init(data) == Status::bad_setting);
  data = inst->data;
  data.reward = {-std::numeric_limits<Real>::max(), Real(1)};
  CHECK(fresh.init(data) == Status::bad_setting);
  data = inst->data;
  data.l2 = Real(-1);
  CHECK(fresh.init(data) == Status::bad_setting);
  data = inst->data;
  data.discount = Real(1);
  CHECK(fresh.init(data) == Status::bad_discount);
  data = inst->data;
  data.lower.tau = Real(-1);
  CHECK(fresh.init(data) == Status::bad_regularization);
  CHECK(fresh.validate_parameters(x) == Status::not_initialized);
  x(3) = Real(1.5);
  CHECK(inst->problem.validate_parameters(x) == Status::out_of_bounds);
  Real f = Real(42);
  Problem::Params g = Problem::Params::Constant(Real(3));
  CHECK(inst->problem.loss(x, f, g) == Status::out_of_bounds);
  CHECK(f == Real(42));
  CHECK(g == Problem::Params::Constant(Real(3)));
  inst->problem.project_parameters(x);
  CHECK(x(3) == Real(1));
  // Empty buffer: f = 0, grad = 0.
  REQUIRE(inst->problem.loss(x, f, g) == Status::ok);
  CHECK(f == Real(0));
  CHECK(g.cwiseAbs().maxCoeff() == Real(0));

  // Oracle: a bad true MDP or setting leaves the previous solution.
  auto oracle = std::make_unique<pbrl::RlhfOracle<Real, S, A>>();
  const auto truth = inst->truth(Real(0.1));
  REQUIRE(oracle->solve(truth, 5000, Real(0)) == Status::ok);
  const Real best = oracle->value_rho();
  const Mat<S, A> best_pi = oracle->policy();
  auto broken = truth;
  broken.discount = Real(1);
  CHECK(oracle->solve(broken, 10, Real(0)) == Status::bad_discount);
  CHECK(oracle->solve(truth, 0, Real(0)) == Status::bad_setting);
  CHECK(oracle->value_rho() == best);
  CHECK(oracle->policy() == best_pi);

  // Drlhf settings and inputs.
  using Solver = pbrl::Drlhf<Problem>;
  auto solver = std::make_unique<Solver>();
  CHECK(solver->step() == Status::not_initialized);
  Real ret;
  CHECK(solver->true_return(ret) == Status::not_initialized);
  pbrl::DrlhfSettings<Real> s;
  const Mat<S, A> uniform = Mat<S, A>::Constant(Real(1) / A);
  const Problem::Params x0 = Problem::Params::Zero();
  s.reward_step = Real(0);
  CHECK(solver->init(inst->problem, s, x0, uniform) == Status::bad_step_size);
  s = {};
  s.policy_steps = -1;
  CHECK(solver->init(inst->problem, s, x0, uniform) == Status::bad_setting);
  s = {};
  s.policy_oracle = static_cast<pbrl::OracleKind>(9);
  CHECK(solver->init(inst->problem, s, x0, uniform) == Status::bad_setting);
  s = {};
  Mat<S, A> bad_pi = uniform;
  bad_pi(0, 0) = Real(0.9);
  CHECK(solver->init(inst->problem, s, x0, bad_pi) == Status::bad_policy);
  CHECK(solver->init(inst->problem, s, Problem::Params::Constant(Real(2)), uniform) == Status::out_of_bounds);
  CHECK(solver->init(inst->problem, s, x0, uniform, &broken) == Status::bad_discount);
  CHECK(solver->step() == Status::not_initialized);
  REQUIRE(solver->init(inst->problem, s, x0, uniform, &truth) == Status::ok);
  REQUIRE(solver->true_return(ret) == Status::ok);
  pbrl::Drlhf<Problem>::Report report;
  REQUIRE(solver->step(&report) == Status::ok);  // empty buffer: the reward stays, the policy learns
  CHECK(report.has_true_return);
  CHECK(report.true_return == ret);
  CHECK(report.loss == Real(0));
  CHECK(solver->iteration() == 1);
}

TEST_CASE("Drlhf counts evaluations stopped at max_sweeps in its report") {
  constexpr int S = 4, A = 3, L = 2, C = 4, T = 3;
  using Inst = RlhfInstance<S, A, L, C>;
  auto inst = std::make_unique<Inst>(40, Real(0.9), Real(0.1), Real(1));
  const auto truth = inst->truth(Real(0.1));
  auto solver = std::make_unique<pbrl::Drlhf<Inst::Problem, EvaluationMethod::sweeps>>();
  pbrl::DrlhfSettings<Real> s;
  s.policy_steps = T;
  const Mat<S, A> uniform = Mat<S, A>::Constant(Real(1) / A);
  REQUIRE(solver->init(inst->problem, s, Inst::Problem::Params::Zero(), uniform, &truth) == Status::ok);
  auto& ws = solver->evaluation_workspace();
  ws.max_sweeps = 2;
  ws.tolerance = Real(0);  // never met
  pbrl::DrlhfReport<Real> r;
  REQUIRE(solver->step(&r) == Status::ok);
  CHECK(r.max_sweeps_hit == T + 1);  // the true return and T PMD steps, all stopped at the cap
  ws.max_sweeps = 5000;
  ws.tolerance = kDouble ? Real(1e-10) : Real(1e-4);
  REQUIRE(solver->step(&r) == Status::ok);
  CHECK(r.max_sweeps_hit == 0);
}

namespace {
// The experiment, tabular (choices the paper leaves open, in one place): a random 6-state, 3-action
// MDP with a sparse hidden reward in [0, 1]; gamma = 0.9; the learner's M_tau(x) has an entropy
// regularizer tau = 0.05 and a reward box [-1, 1]; segments of T + 1 = 3 pairs start at s ~ rho;
// labels from "higher true return wins"; 16 warm-up pairs, then 4 new pairs from the current
// policy before every outer step, the buffer keeping the last 128; 150 outer steps. The true return is
// V^pi(rho) on {r_true, P, rho, gamma, tau*h} and the oracle is its optimum.
constexpr int kS = 6, kA = 3, kLen = 3, kCap = 128;
constexpr Real kGamma = Real(0.9), kTau = Real(0.05);
constexpr int kWarmup = 16, kPairsPerStep = 4, kOuter = 150;
using ExpInst = RlhfInstance<kS, kA, kLen, kCap>;

struct Experiment {
  ExpInst inst{71, kGamma, kTau, Real(1)};
  pbrl::ReturnLabeler<Real, kS, kA> labeler{inst.env.reward};
  pbrl::SegmentSampler<Real, kS, kA> sampler;
  pbrl::RlhfOracle<Real, kS, kA> oracle;
  pbrl::EvaluationWorkspace<Real, kS, EvaluationMethod::direct> ws;
  pbrl::Evaluation<Real, kS, kA> eval;
  pbrl::Mdp<Real, kS, kA> truth = inst.truth(kTau);

  Experiment() {
    REQUIRE(sampler.init(inst.env.transition, inst.env.initial, 72u) == Status::ok);
    REQUIRE(oracle.solve(truth, 20000, Real(0)) == Status::ok);
  }
  Real true_return(const Mat<kS, kA>& pi) {
    REQUIRE(pbrl::evaluate(truth, pi, ws, eval) == Status::ok);
    return eval.value_rho;
  }
  void collect(const Mat<kS, kA>& pi, int pairs) {
    for (int i = 0; i < pairs; ++i)
      REQUIRE(sampler.collect_pair(pi, kLen, labeler.labeler<kLen>(), inst.buffer) == Status::ok);
  }
};
}  // namespace

TEST_CASE("PBRL learns from preferences; DRLHF improves too; both stay below the oracle") {
  const Mat<kS, kA> uniform = Mat<kS, kA>::Constant(Real(1) / kA);
  for (auto kind : {pbrl::PenaltyKind::value, pbrl::PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    auto exp = std::make_unique<Experiment>();
    const Real uniform_return = exp->true_return(uniform);
    const Real best = exp->oracle.value_rho();
    CHECK(exp->true_return(exp->oracle.policy()) == doctest::Approx(best).epsilon(kDouble ? 1e-9 : 1e-4));
    REQUIRE(best > uniform_return);
    exp->collect(uniform, kWarmup);

    // lambda * step_x must stay well below 1 / L_p (the penalty's x-curvature grows like
    // 1/((1-gamma)^2 tau)): with lambda * step_x >= 1 the penalty's pull of the reward towards the
    // current policy overshoots and the true return collapses. Softmax y with a large step: y only
    // follows -lambda * grad_y p (grad_pi f = 0).
    using Solver = pbrl::Pbrl<ExpInst::Problem>;
    auto solver = std::make_unique<Solver>();
    pbrl::PbrlSettings<Real> s;
    s.penalty_kind = kind;
    s.inner_steps = 5;
    s.oracle_step = Real(1);
    s.step_x = Real(0.2);
    s.step_y = Real(5);
    s.lambda_start = s.lambda_final = Real(1);
    REQUIRE(solver->init(exp->inst.problem, s, ExpInst::Problem::Params::Zero(), Mat<kS, kA>::Zero()) ==
            Status::ok);
    Mat<kS, kA> pi;
    Real returns[kOuter + 1];
    for (int k = 0; k < kOuter; ++k) {
      solver->policy(pi);
      returns[k] = exp->true_return(pi);
      exp->collect(pi, kPairsPerStep);  // segments redrawn from the current pi_y
      REQUIRE(solver->step() == Status::ok);
    }
    solver->policy(pi);
    returns[kOuter] = exp->true_return(pi);
    MESSAGE("uniform ", uniform_return, "  PBRL ", returns[kOuter], "  oracle ", best, "  env steps ",
            exp->sampler.steps());
    CHECK(exp->sampler.steps() == long(kWarmup + kOuter * kPairsPerStep) * 2 * kLen);
    CHECK(exp->inst.buffer.size() == kCap);
    CHECK(returns[0] == doctest::Approx(uniform_return).epsilon(kTight));
    // The true return rises over training (checked on a coarse grid: PBRL is a first-order method
    // on a moving buffer, not monotone step by step), ends well above the uniform policy's and below
    // the oracle's.
    for (int k = kOuter / 3; k <= kOuter; k += kOuter / 3) {
      CAPTURE(k);
      CHECK(returns[k] > returns[k - kOuter / 3]);
    }
    CHECK(returns[kOuter] <= best + kTight);
    CHECK(best - returns[kOuter] < Real(0.25) * (best - uniform_return));

    if (kind != pbrl::PenaltyKind::value) continue;
    // DRLHF on a fresh buffer and sampler stream of the same instance.
    auto dexp = std::make_unique<Experiment>();
    dexp->collect(uniform, kWarmup);
    using Baseline = pbrl::Drlhf<ExpInst::Problem>;
    auto baseline = std::make_unique<Baseline>();
    pbrl::DrlhfSettings<Real> ds;
    ds.reward_steps = 1;
    ds.reward_step = Real(0.2);
    ds.policy_steps = 5;
    ds.policy_step = Real(1);
    REQUIRE(baseline->init(dexp->inst.problem, ds, ExpInst::Problem::Params::Zero(), uniform, &dexp->truth) ==
            Status::ok);
    Baseline::Report first, last;
    for (int k = 0; k < kOuter; ++k) {
      dexp->collect(baseline->policy(), kPairsPerStep);
      REQUIRE(baseline->step(k == 0 ? &first : &last) == Status::ok);
    }
    Real final_return;
    REQUIRE(baseline->true_return(final_return) == Status::ok);
    MESSAGE("DRLHF ", final_return, "  loss ", first.loss, " -> ", last.fitted_loss);
    CHECK(baseline->iteration() == kOuter);
    CHECK(first.iteration == 0);
    CHECK(last.iteration == kOuter - 1);
    CHECK(first.true_return == doctest::Approx(uniform_return).epsilon(kTight));
    CHECK(first.loss == doctest::Approx(std::log(Real(2))).epsilon(kTight));  // r = 0: every pair 1/2
    CHECK(last.fitted_loss < first.loss);
    CHECK(final_return <= best + kTight);
    CHECK(best - final_return < Real(0.5) * (best - uniform_return));
  }
}

// ---- Drlhf sampled mode ---------------------------------------------------------------------------

namespace {
// The softmax policy-gradient ascent step is log_pi <- normalize(log_pi + eta * g) (no floor
// reached here); g's rows sum to zero (exact and sampled alike), so the row-centred change of
// log_pi divided by eta is g itself: linear in g, so a sampled step's mean is the exact step's.
template <int S, int A>
Mat<S, A> step_direction(const Mat<S, A>& before, const Mat<S, A>& after, Real eta) {
  Mat<S, A> d = after - before;
  for (int s = 0; s < S; ++s) d.row(s).array() -= d.row(s).mean();
  return d / eta;
}
}  // namespace

TEST_CASE("Drlhf sampled policy steps agree with the exact step within their sampling error") {
  constexpr int S = 4, A = 3, L = 2, C = 4;
  using Inst = RlhfInstance<S, A, L, C>;
  using Problem = Inst::Problem;
  using Solver = pbrl::Drlhf<Problem>;
  constexpr Real kGammaS = Real(0.5), kTauS = Real(0.2), kEta = Real(0.5);
  constexpr int kH = 40, kB = 4;  // gamma^H = 0.5^40 ~ 1e-12: no visible truncation bias
  auto inst = std::make_unique<Inst>(61, kGammaS, kTauS, Real(1));  // empty buffer: x stays where it is
  pbrl::Rng prng(62);
  Problem::Params x0;
  for (int i = 0; i < S * A; ++i) x0(i) = Real(2) * prng.uniform<Real>() - Real(1);
  Mat<S, A> pi0;
  pbrl::policy_from_parameters<Real, S, A>(pbrl::Parameterization::softmax, random_logits<S, A>(prng, Real(1)), pi0);

  pbrl::DrlhfSettings<Real> exact;
  exact.reward_steps = 0;
  exact.policy_oracle = pbrl::OracleKind::policy_gradient;
  exact.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  exact.policy_steps = 1;
  exact.policy_step = kEta;
  pbrl::DrlhfSettings<Real> sampled = exact;
  sampled.gradient = pbrl::GradientMode::sampled;
  sampled.sampling.horizon = kH;
  sampled.sampling.batch = kB;

  // The exact step, and the exact softmax gradient on M(x0) it must follow.
  auto solver = std::make_unique<Solver>();
  REQUIRE(solver->init(inst->problem, exact, x0, pi0) == Status::ok);
  const Mat<S, A> log_before = solver->log_policy();
  REQUIRE(solver->step() == Status::ok);
  CHECK(solver->environment_steps() == 0);  // exact mode takes no environment steps
  const Mat<S, A> g_exact = step_direction<S, A>(log_before, solver->log_policy(), kEta);
  typename Problem::Model model;
  pbrl::Mdp<Real, S, A> mdp;
  REQUIRE(inst->problem.build(x0, model, mdp) == Status::ok);
  const Mat<S, A> pi_before = log_before.array().exp().matrix();
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, S, A> e;
  REQUIRE(pbrl::evaluate(mdp, pi_before, *ws, e) == Status::ok);
  Mat<S, A> grad_pi, g_model;
  pbrl::policy_gradient(mdp, pi_before, e, grad_pi);
  pbrl::chain_policy_gradient<Real, S, A>(pbrl::Parameterization::softmax, pi_before, grad_pi, g_model);
  const Real scale = g_model.cwiseAbs().maxCoeff();
  REQUIRE(scale > Real(0.01));
  CHECK((g_exact - g_model).cwiseAbs().maxCoeff() <= Real(kDouble ? 1e-9 : 2e-3) * (Real(1) + scale));

  // Replicates of one sampled step from the same start, each with its own seed: per coordinate,
  // |mean - exact| <= 4 standard errors (+ rounding).
  const int n = kDouble ? 800 : 200;
  Real mean[S * A] = {}, m2[S * A] = {};
  pbrl::Rng previous;
  for (int r = 0; r < n; ++r) {
    sampled.seed = 1000u + static_cast<std::uint32_t>(r);
    REQUIRE(solver->init(inst->problem, sampled, x0, pi0) == Status::ok);
    CHECK(solver->log_policy() == log_before);
    pbrl::DrlhfReport<Real> report;
    REQUIRE(solver->step(&report) == Status::ok);
    CHECK(solver->environment_steps() == std::int64_t(kB) * kH);
    CHECK(report.environment_steps == std::int64_t(kB) * kH);
    if (r > 0) CHECK_FALSE(same_rng(solver->rng(), previous));
    previous = solver->rng();
    const Mat<S, A> g = step_direction<S, A>(log_before, solver->log_policy(), kEta);
    for (int i = 0; i < S * A; ++i) {  // Welford
      const Real d = g.data()[i] - mean[i];
      mean[i] += d / Real(r + 1);
      m2[i] += d * (g.data()[i] - mean[i]);
    }
  }
  Real worst(0);
  for (int i = 0; i < S * A; ++i) {
    const Real se = std::sqrt(m2[i] / Real(n - 1) / Real(n));
    const Real error = std::abs(mean[i] - g_exact.data()[i]);
    CAPTURE(i);
    CAPTURE(mean[i]);
    CAPTURE(g_exact.data()[i]);
    CAPTURE(se);
    CHECK(se > Real(0));
    CHECK(error <= Real(4) * se + Real(kDouble ? 1e-9 : 1e-4) * (Real(1) + scale));
    if (se > Real(0)) worst = std::max(worst, error / se);
  }
  MESSAGE("Drlhf sampled step vs exact: ", S * A, " coordinates, ", n, " replicates, max |err|/SE = ", worst);

  // Several steps: T * B * H environment steps each, deterministic per seed.
  sampled.policy_steps = 2;
  sampled.seed = 5u;
  auto twin = std::make_unique<Solver>();
  REQUIRE(solver->init(inst->problem, sampled, x0, pi0) == Status::ok);
  REQUIRE(twin->init(inst->problem, sampled, x0, pi0) == Status::ok);
  REQUIRE(solver->run(3) == Status::ok);
  REQUIRE(twin->run(3) == Status::ok);
  CHECK(solver->environment_steps() == std::int64_t(3) * 2 * kB * kH);
  CHECK(solver->iteration() == 3);
  CHECK(solver->log_policy() == twin->log_policy());
  CHECK(same_rng(solver->rng(), twin->rng()));
}

TEST_CASE("Drlhf sampled mode: bad settings are refused and change nothing") {
  constexpr int S = 4, A = 3, L = 2, C = 4;
  using Inst = RlhfInstance<S, A, L, C>;
  using Problem = Inst::Problem;
  using Solver = pbrl::Drlhf<Problem>;
  auto inst = std::make_unique<Inst>(63, Real(0.8), Real(0.1), Real(1));
  const Mat<S, A> uniform = Mat<S, A>::Constant(Real(1) / A);
  pbrl::Segment<S, A, L> d0, d1;
  REQUIRE(d0.push_back(0, 1) == Status::ok);
  REQUIRE(d1.push_back(2, 0) == Status::ok);
  REQUIRE(inst->buffer.push(d0, d1, Label(1)) == Status::ok);  // the reward moves too

  pbrl::DrlhfSettings<Real> good;
  good.policy_oracle = pbrl::OracleKind::policy_gradient;
  good.policy_steps = 2;
  good.policy_step = Real(0.3);
  good.gradient = pbrl::GradientMode::sampled;
  good.sampling.horizon = 6;
  good.sampling.batch = 3;
  good.seed = 9u;
  auto solver = std::make_unique<Solver>();
  auto twin = std::make_unique<Solver>();
  REQUIRE(solver->init(inst->problem, good, Problem::Params::Zero(), uniform) == Status::ok);
  REQUIRE(twin->init(inst->problem, good, Problem::Params::Zero(), uniform) == Status::ok);
  REQUIRE(solver->run(2) == Status::ok);
  REQUIRE(twin->run(2) == Status::ok);

  const Problem::Params x = solver->x();
  const Mat<S, A> log_pi = solver->log_policy(), pi = solver->policy();
  const pbrl::Rng rng = solver->rng();
  const std::int64_t steps = solver->environment_steps();
  CHECK(steps == std::int64_t(2) * 2 * 3 * 6);
  CHECK(x != Problem::Params::Zero());
  auto refused = [&](pbrl::DrlhfSettings<Real> s, Status expected) {
    CHECK(solver->init(inst->problem, s, Problem::Params::Zero(), uniform) == expected);
    CHECK(solver->x() == x);
    CHECK(solver->log_policy() == log_pi);
    CHECK(solver->policy() == pi);
    CHECK(solver->iteration() == 2);
    CHECK(solver->environment_steps() == steps);
    CHECK(same_rng(solver->rng(), rng));
    CHECK(solver->settings().gradient == pbrl::GradientMode::sampled);
  };
  auto s = good;
  s.policy_oracle = pbrl::OracleKind::policy_mirror_descent;  // needs Q at every (s,a)
  refused(s, Status::bad_setting);
  s = good;
  s.policy_oracle = pbrl::OracleKind::soft_value_iteration;
  refused(s, Status::bad_setting);
  s = good;
  s.sampling.horizon = 0;
  refused(s, Status::bad_setting);
  s = good;
  s.sampling.horizon = pbrl::kMaxHorizon + 1;
  refused(s, Status::bad_setting);
  s = good;
  s.sampling.batch = 0;
  refused(s, Status::bad_setting);
  s = good;
  s.gradient = static_cast<pbrl::GradientMode>(7);
  refused(s, Status::bad_setting);
  s = good;
  s.policy_step = Real(0);
  refused(s, Status::bad_step_size);
  // The exact mode ignores the sampling settings.
  s = good;
  s.gradient = pbrl::GradientMode::exact;
  s.policy_oracle = pbrl::OracleKind::policy_mirror_descent;
  s.sampling.horizon = 0;
  auto other = std::make_unique<Solver>();
  CHECK(other->init(inst->problem, s, Problem::Params::Zero(), uniform) == Status::ok);

  // After the refusals the solver goes on exactly as its twin.
  REQUIRE(solver->step() == Status::ok);
  REQUIRE(twin->step() == Status::ok);
  CHECK(solver->x() == twin->x());
  CHECK(solver->log_policy() == twin->log_policy());
  CHECK(same_rng(solver->rng(), twin->rng()));
  CHECK(solver->environment_steps() == twin->environment_steps());
}

TEST_CASE("an exact-only Drlhf steps like the default type and refuses sampled mode") {
  constexpr int S = 4, A = 3, L = 2, C = 4;
  using Inst = RlhfInstance<S, A, L, C>;
  using Problem = Inst::Problem;
  auto inst = std::make_unique<Inst>(67, Real(0.8), Real(0.1), Real(1));
  const auto truth = inst->truth(Real(0.1));
  pbrl::Segment<S, A, L> d0, d1;
  REQUIRE(d0.push_back(0, 1) == Status::ok);
  REQUIRE(d1.push_back(2, 0) == Status::ok);
  REQUIRE(inst->buffer.push(d0, d1, Label(1)) == Status::ok);  // the reward moves too
  const Mat<S, A> uniform = Mat<S, A>::Constant(Real(1) / A);
  auto init = [&](auto& baseline, pbrl::GradientMode mode) {
    pbrl::DrlhfSettings<Real> s;
    s.policy_steps = 2;
    s.gradient = mode;
    if (mode == pbrl::GradientMode::sampled) s.policy_oracle = pbrl::OracleKind::policy_gradient;
    s.sampling.horizon = 5;
    s.sampling.batch = 3;
    return baseline.init(inst->problem, s, Problem::Params::Zero(), uniform, &truth);
  };
  auto same = [](const auto& a, const auto& b) {
    CHECK(a.policy() == b.policy());
    CHECK(a.log_policy() == b.log_policy());
  };
  check_exact_only_baseline<pbrl::Drlhf, Problem>(init, same);
}


TEST_CASE("a rollout or segment from a row with no mass: indices in range, the values NaN or a status") {
  constexpr int S = 3, A = 2;
  RandomModel<S, A> env(9);
  for (Real& p : env.transition) p = Real(0);
  const auto m = env.mdp(Real(0.9), Real(0.1));
  const Mat<S, A> pi = Mat<S, A>::Constant(Real(1) / A);
  pbrl::Rng rng(3u);
  pbrl::Trajectory<Real, 4> traj;
  pbrl::detail::rollout_unchecked(m, pi, pi, 4, rng, traj);
  pbrl::detail::returns_unchecked(m, pi, traj);
  CHECK_FALSE(traj.valid);
  for (int t = 0; t <= 4; ++t) {
    CHECK(traj.state[t] >= 0);
    CHECK(traj.state[t] < S);
    CHECK(std::isnan(traj.value[t]));
  }
  // The RLHF segment sampler: bad_transition, the segment, Rng and count unchanged.
  RandomModel<S, A> good(9);
  pbrl::SegmentSampler<Real, S, A> sampler;
  REQUIRE(sampler.init(good.transition, good.initial, 5u) == Status::ok);
  pbrl::Segment<S, A, 4> d;
  REQUIRE(sampler.sample(pi, 4, d) == Status::ok);
  const pbrl::Segment<S, A, 4> kept = d;
  for (Real& p : good.transition) p = Real(0);
  const pbrl::Rng saved = sampler.rng();
  const auto steps = sampler.steps();
  CHECK(sampler.sample(pi, 4, d) == Status::bad_transition);
  CHECK(std::memcmp(&kept, &d, sizeof d) == 0);
  CHECK(sampler.steps() == steps);
  CHECK(std::memcmp(sampler.rng().state(), saved.state(), 16) == 0);
}

}  // namespace test_rlhf
