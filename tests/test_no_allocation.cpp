// No pbrl call touches the heap (host only, glibc). This program replaces every global
// allocation function -- malloc, calloc, realloc, free, aligned_alloc, posix_memalign,
// memalign and all forms of operator new / delete (plain, array, nothrow, sized, aligned) --
// with versions that count their calls while a trap is armed and forward to glibc's allocator
// (__libc_malloc and friends). The trap is armed only around the API calls under test; every
// object they use is allocated before (big ones with std::make_unique).
// It is a separate executable because it replaces the allocation functions of the whole program.
#include "game_support.hpp"
#include "solver_support.hpp"
#include "pbrl/baselines/drlhf.hpp"
#include "pbrl/baselines/independent_pg.hpp"
#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "pbrl/problems/rlhf.hpp"
#include "pbrl/problems/stackelberg.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

// ---- the trap ------------------------------------------------------------------------------

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* ptr);
}

namespace trap {

enum Kind : int {
  kMalloc, kCalloc, kRealloc, kFree, kAlignedAlloc, kPosixMemalign, kMemalign,
  kNew, kNewArray, kNewNothrow, kNewArrayNothrow,
  kNewAligned, kNewArrayAligned, kNewAlignedNothrow, kNewArrayAlignedNothrow,
  kDelete, kDeleteArray, kDeleteNothrow, kDeleteArrayNothrow, kDeleteSized, kDeleteArraySized,
  kDeleteAligned, kDeleteArrayAligned, kDeleteAlignedNothrow, kDeleteArrayAlignedNothrow,
  kDeleteSizedAligned, kDeleteArraySizedAligned,
  kKinds
};

const char* const kNames[kKinds] = {
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "memalign",
    "new", "new[]", "new(nothrow)", "new[](nothrow)",
    "new(align)", "new[](align)", "new(align, nothrow)", "new[](align, nothrow)",
    "delete", "delete[]", "delete(nothrow)", "delete[](nothrow)", "delete(size)", "delete[](size)",
    "delete(align)", "delete[](align)", "delete(align, nothrow)", "delete[](align, nothrow)",
    "delete(size, align)", "delete[](size, align)"};

std::atomic<bool> armed{false};
std::atomic<long> counts[kKinds];

inline void note(Kind kind) {
  if (armed.load(std::memory_order_seq_cst)) counts[kind].fetch_add(1, std::memory_order_relaxed);
}

struct Counts {
  long n[kKinds] = {};
  long total() const {
    long t = 0;
    for (long v : n) t += v;
    return t;
  }
  // Names of the functions called, for failure messages (built after the trap is disarmed).
  doctest::String describe() const {
    doctest::String s;
    for (int k = 0; k < kKinds; ++k)
      if (n[k] != 0) s += doctest::String(kNames[k]) + " x" + doctest::toString(n[k]) + " ";
    return s;
  }
};

// Calls f() with the trap armed and returns what it counted.
template <typename F>
Counts during(F&& f) {
  for (auto& c : counts) c.store(0, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  armed.store(true, std::memory_order_seq_cst);
  f();
  armed.store(false, std::memory_order_seq_cst);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  Counts out;
  for (int k = 0; k < kKinds; ++k) out.n[k] = counts[k].load(std::memory_order_relaxed);
  return out;
}

void* checked(void* p) {
  if (p == nullptr) std::abort();  // built without exceptions: no std::bad_alloc
  return p;
}

// What each replaced deallocation function does: note the call, then free p.
void release(Kind kind, void* p) {
  note(kind);
  __libc_free(p);
}

}  // namespace trap

extern "C" {
void* malloc(std::size_t size) noexcept {
  trap::note(trap::kMalloc);
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
  trap::note(trap::kCalloc);
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, std::size_t size) noexcept {
  trap::note(trap::kRealloc);
  return __libc_realloc(ptr, size);
}
void free(void* ptr) noexcept {
  trap::release(trap::kFree, ptr);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  trap::note(trap::kAlignedAlloc);
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  trap::note(trap::kPosixMemalign);
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return 22;  // EINVAL
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* memalign(std::size_t alignment, std::size_t size) noexcept {
  trap::note(trap::kMemalign);
  return __libc_memalign(alignment, size);
}
}

namespace {
std::size_t nonzero(std::size_t n) { return n == 0 ? 1 : n; }
std::size_t alignment(std::align_val_t a) { return static_cast<std::size_t>(a); }
}  // namespace

void* operator new(std::size_t n) {
  trap::note(trap::kNew);
  return trap::checked(__libc_malloc(nonzero(n)));
}
void* operator new[](std::size_t n) {
  trap::note(trap::kNewArray);
  return trap::checked(__libc_malloc(nonzero(n)));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  trap::note(trap::kNewNothrow);
  return __libc_malloc(nonzero(n));
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  trap::note(trap::kNewArrayNothrow);
  return __libc_malloc(nonzero(n));
}
void* operator new(std::size_t n, std::align_val_t a) {
  trap::note(trap::kNewAligned);
  return trap::checked(__libc_memalign(alignment(a), nonzero(n)));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  trap::note(trap::kNewArrayAligned);
  return trap::checked(__libc_memalign(alignment(a), nonzero(n)));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  trap::note(trap::kNewAlignedNothrow);
  return __libc_memalign(alignment(a), nonzero(n));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  trap::note(trap::kNewArrayAlignedNothrow);
  return __libc_memalign(alignment(a), nonzero(n));
}
void operator delete(void* p) noexcept {
  trap::release(trap::kDelete, p);
}
void operator delete[](void* p) noexcept {
  trap::release(trap::kDeleteArray, p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  trap::release(trap::kDeleteNothrow, p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  trap::release(trap::kDeleteArrayNothrow, p);
}
void operator delete(void* p, std::size_t) noexcept {
  trap::release(trap::kDeleteSized, p);
}
void operator delete[](void* p, std::size_t) noexcept {
  trap::release(trap::kDeleteArraySized, p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  trap::release(trap::kDeleteAligned, p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  trap::release(trap::kDeleteArrayAligned, p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  trap::release(trap::kDeleteAlignedNothrow, p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  trap::release(trap::kDeleteArrayAlignedNothrow, p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  trap::release(trap::kDeleteSizedAligned, p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  trap::release(trap::kDeleteArraySizedAligned, p);
}

// Runs the statement(s) with the trap armed and checks that nothing was allocated or freed.
#define CHECK_NO_ALLOCATION(...)                                                    \
  do {                                                                              \
    const trap::Counts counts_ = trap::during([&] { __VA_ARGS__; });                \
    CHECK_MESSAGE(counts_.total() == 0,                                             \
                  (doctest::String(#__VA_ARGS__) + " called " + counts_.describe())); \
  } while (0)

// ---- the trap works ------------------------------------------------------------------------

namespace {
struct alignas(64) Overaligned {
  char bytes[64];
};
}  // namespace

TEST_CASE("allocation trap: counts each allocation function, and only while armed") {
  using trap::during;
  // Pointers escape through volatile objects so that no call can be optimized away.
  int* volatile p = nullptr;
  trap::Counts c = during([&] { p = new int(7); });
  CHECK(c.total() == 1);
  CHECK(c.n[trap::kNew] == 1);
  c = during([&] { delete p; });
  CHECK(c.total() == 1);
  CHECK((c.n[trap::kDelete] + c.n[trap::kDeleteSized]) == 1);

  c = during([&] { p = new int[5]; });
  CHECK(c.n[trap::kNewArray] == 1);
  c = during([&] { delete[] p; });
  CHECK((c.n[trap::kDeleteArray] + c.n[trap::kDeleteArraySized]) == 1);

  c = during([&] { p = new (std::nothrow) int(3); });
  CHECK(c.n[trap::kNewNothrow] == 1);
  c = during([&] { operator delete(p, std::nothrow); });
  CHECK(c.n[trap::kDeleteNothrow] == 1);
  c = during([&] { p = new (std::nothrow) int[2]; });
  CHECK(c.n[trap::kNewArrayNothrow] == 1);
  c = during([&] { operator delete[](p, std::nothrow); });
  CHECK(c.n[trap::kDeleteArrayNothrow] == 1);

  Overaligned* volatile o = nullptr;
  c = during([&] { o = new Overaligned; });
  CHECK(c.n[trap::kNewAligned] == 1);
  CHECK(reinterpret_cast<std::uintptr_t>(o) % 64 == 0);
  c = during([&] { delete o; });
  CHECK((c.n[trap::kDeleteAligned] + c.n[trap::kDeleteSizedAligned]) == 1);
  c = during([&] { o = new Overaligned[3]; });
  CHECK(c.n[trap::kNewArrayAligned] == 1);
  c = during([&] { delete[] o; });
  CHECK((c.n[trap::kDeleteArrayAligned] + c.n[trap::kDeleteArraySizedAligned]) == 1);
  c = during([&] { o = new (std::nothrow) Overaligned; });
  CHECK(c.n[trap::kNewAlignedNothrow] == 1);
  c = during([&] { operator delete(o, std::align_val_t(64), std::nothrow); });
  CHECK(c.n[trap::kDeleteAlignedNothrow] == 1);
  c = during([&] { o = new (std::nothrow) Overaligned[2]; });
  CHECK(c.n[trap::kNewArrayAlignedNothrow] == 1);
  c = during([&] { operator delete[](o, std::align_val_t(64), std::nothrow); });
  CHECK(c.n[trap::kDeleteArrayAlignedNothrow] == 1);

  void* volatile m = nullptr;
  c = during([&] { m = std::malloc(24); });
  CHECK(c.n[trap::kMalloc] == 1);
  c = during([&] { m = std::realloc(m, 4096); });
  CHECK(c.n[trap::kRealloc] == 1);
  c = during([&] { std::free(m); });
  CHECK(c.n[trap::kFree] == 1);
  c = during([&] { m = std::calloc(3, 8); });
  CHECK(c.n[trap::kCalloc] == 1);
  std::free(m);
  c = during([&] { m = std::aligned_alloc(64, 128); });
  CHECK(c.n[trap::kAlignedAlloc] == 1);
  std::free(m);
  c = during([&] {
    void* q = nullptr;
    if (posix_memalign(&q, 64, 100) == 0) m = q;
  });
  CHECK(c.n[trap::kPosixMemalign] == 1);
  std::free(m);
  // std::make_unique of a solver-sized object goes through operator new.
  c = during([&] { auto big = std::make_unique<Mat<50, 5>>(); });
  CHECK(c.n[trap::kNew] == 1);
  // Eigen's heap (a dynamic-size object) is seen too.
  volatile Real sink = 0;
  c = during([&] {
    Eigen::Matrix<Real, Eigen::Dynamic, 1> v(100);
    v.setOnes();
    sink = v.sum();
  });
  CHECK(c.total() >= 2);  // one allocation, one release
  CHECK(sink == Real(100));
  // Disarmed: nothing counted, and the macro sees a clean statement as clean.
  p = new int(1);
  delete p;
  c = during([] {});
  CHECK(c.total() == 0);
  CHECK_NO_ALLOCATION((void)0);
}

// ---- the library ---------------------------------------------------------------------------

namespace {
// Every buffer a primitive call needs, on the heap before the trap is armed.
template <int S, int A>
struct Buffers {
  Mat<S, A> pi, sigma, pi_hat, log_pi, y, grad, grad_y, mu, weights, q, grad_pi;
  Vec<S> warm, value;
  pbrl::Evaluation<Real, S, A> eval, eval_hat;
  pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct> direct;
  pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::sweeps> sweeps;
  pbrl::SoftValueIterationResult<Real> svi;
  Real scratch[S * A * S];
};

template <int S, int A>
void primitives_do_not_allocate(std::uint32_t seed, int max_sweeps) {
  using Shaping = pbrl::RewardShaping<Real, S, A>;
  const auto model = std::make_unique<RandomModel<S, A>>(seed);
  auto b = std::make_unique<Buffers<S, A>>();
  auto problem = std::make_unique<Shaping>();
  auto shaping_model = std::make_unique<typename Shaping::Model>();
  auto x = std::make_unique<typename Shaping::Params>();
  auto grad_x = std::make_unique<typename Shaping::Params>();
  b->sweeps.max_sweeps = max_sweeps;
  pbrl::Rng rng(seed + 1);
  b->pi = random_policy<S, A>(rng);
  b->sigma = random_policy<S, A>(rng);
  b->y = random_logits<S, A>(rng);
  b->log_pi = b->pi.array().log().matrix();
  b->warm.setZero();
  b->value.setZero();
  x->setConstant(Real(0.1));
  grad_x->setZero();
  Status st = Status::ok;
  const pbrl::PolicySet<Real> softmax{Parameterization::softmax, Real(1e-3), Real(20)};
  const pbrl::PolicySet<Real> direct{Parameterization::direct, Real(1e-3), Real(20)};

  for (RegularizerKind kind : {RegularizerKind::entropy, RegularizerKind::kl_reference}) {
    CAPTURE(static_cast<int>(kind));
    const pbrl::Mdp<Real, S, A> m = model->mdp(Real(0.9), Real(0.2), kind);
    // validation
    CHECK_NO_ALLOCATION(st = pbrl::validate(m));
    CHECK(st == Status::ok);
    CHECK_NO_ALLOCATION(st = pbrl::validate_transition<Real, S, A>(m.transition));
    CHECK_NO_ALLOCATION(st = pbrl::validate_initial<Real, S>(m.initial));
    CHECK_NO_ALLOCATION(st = pbrl::validate_discount(m.discount));
    CHECK_NO_ALLOCATION(st = pbrl::validate(m.regularizer));
    CHECK_NO_ALLOCATION(st = pbrl::validate<Real, A>(softmax));
    CHECK_NO_ALLOCATION(st = pbrl::validate_parameters<Real, S, A>(softmax, b->y));
    CHECK_NO_ALLOCATION(st = pbrl::validate_policy<Real, S, A>(b->pi));
    CHECK(st == Status::ok);
    // policies
    for (const auto& set : {softmax, direct}) {
      CHECK_NO_ALLOCATION(pbrl::policy_from_parameters<Real, S, A>(set.parameterization, b->y, b->pi_hat));
      CHECK_NO_ALLOCATION(pbrl::chain_policy_gradient<Real, S, A>(set.parameterization, b->pi, b->y, b->grad_y));
      CHECK_NO_ALLOCATION(b->grad = b->y; pbrl::project_policy_set<Real, S, A>(set, b->grad));
    }
    // evaluation, both methods
    CHECK_NO_ALLOCATION(st = pbrl::evaluate(m, b->pi, b->direct, b->eval));
    CHECK(st == Status::ok);
    CHECK_NO_ALLOCATION(st = pbrl::evaluate(m, b->pi, b->sweeps, b->eval));
    CHECK(st == Status::ok);
    CHECK_NO_ALLOCATION(pbrl::policy_gradient(m, b->pi, b->eval, b->grad));
    CHECK_NO_ALLOCATION(pbrl::state_action_occupancy(b->eval, b->pi, b->mu));
    CHECK_NO_ALLOCATION(st = pbrl::evaluate(m, b->pi, b->direct, b->eval);
                        st = pbrl::occupancy_from_start(m, {b->sigma, b->pi}, b->direct, b->warm, b->mu, true));
    CHECK(st == Status::ok);
    CHECK_NO_ALLOCATION(st = pbrl::occupancy_from_start(m, {b->sigma, b->pi}, b->direct, b->warm, b->mu));
    CHECK(st == Status::ok);
    CHECK_NO_ALLOCATION(st = pbrl::occupancy_from_start(m, {b->sigma, b->pi}, b->sweeps, b->warm, b->mu));
    CHECK(st == Status::ok);
    // oracles
    CHECK_NO_ALLOCATION(st = pbrl::pmd_step(m, Real(1), b->direct, b->eval, {b->log_pi, b->pi}));
    CHECK(st == Status::ok);
    CHECK_NO_ALLOCATION(st = pbrl::pmd_step(m, Real(1), b->sweeps, b->eval, {b->log_pi, b->pi}));
    CHECK(st == Status::ok);
    for (const auto& set : {softmax, direct}) {
      CHECK_NO_ALLOCATION(st = pbrl::policy_gradient_step(m, set, Real(0.5), b->direct, b->eval, b->grad,
                                                          {b->log_pi, b->pi}));
      CHECK(st == Status::ok);
      CHECK_NO_ALLOCATION(st = pbrl::policy_gradient_step(m, set, Real(0.5), b->sweeps, b->eval, b->grad,
                                                          {b->log_pi, b->pi}));
      CHECK(st == Status::ok);
    }
    CHECK_NO_ALLOCATION(
        st = pbrl::soft_value_iteration(m, 200, Real(1e-6), b->value, b->q, {b->log_pi, b->pi_hat}, &b->svi));
    CHECK(st == Status::ok);
    const pbrl::Mdp<Real, S, A> hard = model->mdp(Real(0.9), Real(0), kind);
    CHECK_NO_ALLOCATION(st = pbrl::soft_value_iteration(hard, 200, Real(1e-6), b->value, b->q, {b->log_pi, b->pi_hat}));
    CHECK(st == Status::ok);
    // error paths
    b->grad = b->pi;
    b->grad(0, 0) = Real(-1);
    CHECK_NO_ALLOCATION(st = pbrl::evaluate(m, b->grad, b->direct, b->eval));
    CHECK(st == Status::bad_policy);
    CHECK_NO_ALLOCATION(st = pbrl::pmd_step(m, Real(-1), b->sweeps, b->eval, {b->log_pi, b->pi}));
    CHECK(st == Status::bad_step_size);
    const char* volatile name = nullptr;
    CHECK_NO_ALLOCATION(name = pbrl::to_string(Status::numerical_failure));
    CHECK(name != nullptr);
  }

  // random instances
  CHECK_NO_ALLOCATION(pbrl::Rng r(seed); pbrl::random_reward(r, b->scratch, S * A, Real(0.7));
                      pbrl::random_transition(r, b->scratch, S * A, S);
                      pbrl::random_distribution(r, b->scratch, S));

  // reward shaping and both penalties
  typename Shaping::Data data;
  data.reward = model->reward;
  data.transition = model->transition;
  data.initial = model->initial;
  data.lower = {RegularizerKind::kl_reference, Real(0.2), model->reference};
  CHECK_NO_ALLOCATION(st = problem->init(data));
  REQUIRE(st == Status::ok);
  pbrl::Mdp<Real, S, A> mdp;
  CHECK_NO_ALLOCATION(st = problem->validate_parameters(*x));
  CHECK_NO_ALLOCATION(problem->project_parameters(*x));
  CHECK_NO_ALLOCATION(st = problem->build(*x, *shaping_model, mdp));
  REQUIRE(st == Status::ok);
  Real f(0);
  CHECK_NO_ALLOCATION(st = problem->upper(b->pi, *shaping_model, b->direct, b->eval, f, *grad_x, b->grad_pi));
  CHECK(st == Status::ok);
  CHECK_NO_ALLOCATION(st = problem->upper(b->pi, *shaping_model, b->sweeps, b->eval, f, *grad_x, b->grad_pi));
  CHECK(st == Status::ok);
  CHECK_NO_ALLOCATION(problem->vjp(*shaping_model, b->mu, b->value, Real(0.5), *grad_x));
  REQUIRE(pbrl::soft_value_iteration(mdp, 500, Real(1e-8), b->value, b->q, {b->log_pi, b->pi_hat}) == Status::ok);
  REQUIRE(pbrl::evaluate(mdp, b->pi, b->direct, b->eval) == Status::ok);
  REQUIRE(pbrl::evaluate(mdp, b->pi_hat, b->direct, b->eval_hat) == Status::ok);
  Real p(0);
  CHECK_NO_ALLOCATION(p = pbrl::value_penalty(*problem, *shaping_model, mdp, pbrl::PolicyY{b->pi, b->eval}, pbrl::PolicyHat{b->pi_hat, b->eval_hat}, Real(2),
                                              b->weights, {*grad_x, b->grad_pi}));
  CHECK(std::isfinite(p));
  CHECK_NO_ALLOCATION(st = pbrl::occupancy_from_start(mdp, {b->pi, b->pi_hat}, b->direct, b->warm, b->mu, true);
                      p = pbrl::bellman_penalty(*problem, *shaping_model, mdp, pbrl::PolicyY{b->pi}, pbrl::PolicyHat{b->pi_hat, b->eval_hat}, b->mu, Real(2),
                                                b->weights, {*grad_x, b->grad_pi}));
  CHECK(st == Status::ok);
  CHECK(std::isfinite(p));
}

// save_checkpoint, restore_checkpoint and the A/B pair on an initialized solver, each with the
// trap armed (slot 1 of the pair is zeros: no image).
template <class Solver>
void checkpoint_does_not_allocate(Solver& solver) {
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  auto slots = std::make_unique<unsigned char[]>(2 * n);
  Status st = Status::ok;
  CHECK_NO_ALLOCATION(st = pbrl::save_checkpoint(solver, slots.get(), n));
  CHECK(st == Status::ok);
  CHECK_NO_ALLOCATION(st = pbrl::restore_checkpoint(solver, slots.get(), n));
  CHECK(st == Status::ok);
  int slot = -1;
  CHECK_NO_ALLOCATION(slot = pbrl::checkpoint_slot_to_write<Solver>(slots.get(), slots.get() + n, n));
  CHECK(slot == 1);
  CHECK_NO_ALLOCATION(st = pbrl::restore_newest_checkpoint(solver, slots.get(), slots.get() + n, n));
  CHECK(st == Status::ok);
}

template <class Problem, EvaluationMethod M>
void solver_does_not_allocate(const Problem& problem, PenaltyKind kind, Parameterization param,
                              OracleKind oracle, int max_sweeps) {
  using Solver = pbrl::Pbrl<Problem, M>;
  constexpr int S = Problem::kStates, A = Problem::kActions;
  auto solver = std::make_unique<Solver>();
  auto fresh = std::make_unique<Solver>();
  auto x0 = std::make_unique<typename Problem::Params>();
  auto y0 = std::make_unique<Mat<S, A>>();
  x0->setZero();
  const pbrl::PbrlSettings<Real> settings = solver_support::configuration_settings(kind, param, oracle);
  pbrl::uniform_parameters(settings.policy, *y0);
  if constexpr (M == EvaluationMethod::sweeps) {
    solver->evaluation_workspace().max_sweeps = max_sweeps;
  } else {
    (void)max_sweeps;
  }
  pbrl::PbrlReport<Real> report;
  Status st = Status::ok;
  CHECK_NO_ALLOCATION(st = fresh->step(&report));
  CHECK(st == Status::not_initialized);
  CHECK_NO_ALLOCATION(st = solver->run(-1));
  CHECK(st == Status::bad_setting);
  CHECK_NO_ALLOCATION(st = solver->init(problem, settings, *x0, *y0));
  REQUIRE(st == Status::ok);
  CHECK_NO_ALLOCATION(st = solver->step(&report));
  CHECK(st == Status::ok);
  CHECK_NO_ALLOCATION(st = solver->run(2, &report));
  CHECK(st == Status::ok);
  CHECK(solver->iteration() == 3);
  check_report_finite(report);
  CHECK_NO_ALLOCATION(solver->policy(*y0));
  checkpoint_does_not_allocate(*solver);
}

template <class Problem>
void solver_matrix(const Problem& problem, int max_sweeps) {
  solver_support::for_each_pbrl_configuration([&](PenaltyKind kind, Parameterization param, OracleKind oracle) {
    solver_does_not_allocate<Problem, EvaluationMethod::direct>(problem, kind, param, oracle, max_sweeps);
    solver_does_not_allocate<Problem, EvaluationMethod::sweeps>(problem, kind, param, oracle, max_sweeps);
  });
}

template <int S, int A>
std::unique_ptr<pbrl::RewardShaping<Real, S, A>> shaping(const RandomModel<S, A>& task) {
  auto problem = std::make_unique<pbrl::RewardShaping<Real, S, A>>();
  typename pbrl::RewardShaping<Real, S, A>::Data data;
  data.reward = task.reward;
  data.transition = task.transition;
  data.initial = task.initial;
  data.lower = {RegularizerKind::entropy, Real(0.1), nullptr};
  REQUIRE(problem->init(data) == Status::ok);
  return problem;
}
}  // namespace

TEST_CASE("no allocation: validation, evaluation, oracles, penalties and reward shaping (S=6, A=3)") {
  primitives_do_not_allocate<6, 3>(1, 500);
}

TEST_CASE("no allocation: the same at the paper's size (S=100, A=5)") {
  primitives_do_not_allocate<100, 5>(2, 60);
}

TEST_CASE("no allocation: Pbrl init/step/run, every penalty, parameterization, oracle and evaluation method") {
  const auto task = std::make_unique<RandomModel<6, 3>>(3, Real(0.7));
  const auto problem = shaping(*task);
  solver_matrix(*problem, 500);
  // A problem whose transitions depend on x.
  const auto mixture = std::make_unique<MixtureProblem<6, 3, 4>>(4);
  solver_matrix(*mixture, 500);
}

TEST_CASE("no allocation: Pbrl at the paper's size (S=100, A=5)") {
  const auto task = std::make_unique<RandomModel<100, 5>>(5, Real(0.7));
  const auto problem = shaping(*task);
  solver_matrix(*problem, 60);
}

namespace {
// init, step and run(2) of a solver or baseline object, each with the trap armed.
template <class Solver, typename Init>
void object_does_not_allocate(Solver& solver, Init&& init) {
  Status st = Status::ok;
  CHECK_NO_ALLOCATION(st = init(solver));
  REQUIRE(st == Status::ok);
  typename Solver::Report report;
  CHECK_NO_ALLOCATION(st = solver.step(&report));
  CHECK(st == Status::ok);
  CHECK_NO_ALLOCATION(st = solver.run(2, &report));
  CHECK(st == Status::ok);
  CHECK(solver.iteration() == 3);
}

pbrl::SamplingSettings small_batch() {
  pbrl::SamplingSettings s;
  s.horizon = 5;
  s.batch = 4;
  return s;
}

// Pbrl's settings here: softmax policies, the policy-gradient oracle, gradients in `mode`, small batches.
pbrl::PbrlSettings<Real> softmax_pg_settings(pbrl::GradientMode mode) {
  pbrl::PbrlSettings<Real> s;
  s.policy.parameterization = Parameterization::softmax;
  s.oracle = OracleKind::policy_gradient;
  s.oracle_policy.parameterization = Parameterization::softmax;
  s.gradient = mode;
  s.sampling = small_batch();
  return s;
}

// A Pbrl (evaluation method M) on problem from zero parameters: object_does_not_allocate.
template <int S, int A, EvaluationMethod M = EvaluationMethod::direct, class Problem>
void pbrl_does_not_allocate(const Problem& problem, const pbrl::PbrlSettings<Real>& s) {
  auto solver = std::make_unique<pbrl::Pbrl<Problem, M>>();
  object_does_not_allocate(*solver,
                           [&](auto& o) { return o.init(problem, s, Problem::Params::Zero(), Mat<S, A>::Zero()); });
}
}  // namespace

TEST_CASE("no allocation: sampled Pbrl, Stackelberg, zero-sum, incentive-design and RLHF solvers and baselines") {
  constexpr int S = 6, A = 3;
  SUBCASE("sampled Pbrl (reward shaping and x-dependent transitions)") {
    const auto task = std::make_unique<RandomModel<S, A>>(11, Real(0.7));
    const auto problem = shaping(*task);
    const auto mixture = std::make_unique<MixtureProblem<S, A, 4>>(12);
    for (PenaltyKind kind : {PenaltyKind::value, PenaltyKind::bellman}) {
      pbrl::PbrlSettings<Real> s = softmax_pg_settings(pbrl::GradientMode::sampled);
      s.penalty_kind = kind;
      pbrl_does_not_allocate<S, A>(*problem, s);
      pbrl_does_not_allocate<S, A, EvaluationMethod::sweeps>(*mixture, s);
    }
  }
  SUBCASE("Stackelberg game: Pbrl and independent policy gradient, exact and sampled") {
    constexpr int AL = 2;
    using Game = pbrl::Stackelberg<Real, S, AL, A>;
    auto arrays = std::make_unique<StackelbergArrays<Real, S, AL, A>>();
    pbrl::Rng rng(13);
    arrays->draw(rng, Real(0.7));
    typename Game::Data data = arrays->data();
    data.follower.tau = Real(0.1);
    auto game = std::make_unique<Game>();
    REQUIRE(game->init(data) == Status::ok);
    for (auto mode : {pbrl::GradientMode::exact, pbrl::GradientMode::sampled}) {
      CAPTURE(static_cast<int>(mode));
      pbrl_does_not_allocate<S, A>(*game, softmax_pg_settings(mode));
      pbrl::IndependentPgSettings<Real> is;
      is.gradient = mode;
      is.sampling = small_batch();
      auto baseline = std::make_unique<pbrl::IndependentPolicyGradient<Game>>();
      object_does_not_allocate(*baseline,
                               [&](auto& o) { return o.init(*game, is, Game::Params::Zero(), Mat<S, A>::Zero()); });
    }
  }
  SUBCASE("zero-sum lower level: PbrlZeroSum and the meta-gradient on incentive design, exact and sampled") {
    constexpr int A1 = 2, A2 = 3;
    using Incentive = pbrl::IncentiveDesign<Real, S, A1, A2>;
    const auto data = std::make_unique<GameData<S, A1, A2>>(14);
    auto problem = std::make_unique<Incentive>();
    REQUIRE(problem->init(data->incentive(Real(0.9), Real(0.1), true)) == Status::ok);
    const auto x0 = std::make_unique<Incentive::Params>(Incentive::Params::Zero());
    for (auto mode : {pbrl::GradientMode::exact, pbrl::GradientMode::sampled}) {
      CAPTURE(static_cast<int>(mode));
      pbrl::PbrlZeroSumSettings<Real> zs;
      zs.policy.parameterization = Parameterization::softmax;
      zs.oracle = mode == pbrl::GradientMode::exact ? OracleKind::policy_mirror_descent : OracleKind::policy_gradient;
      zs.oracle_policy.parameterization = Parameterization::softmax;
      zs.gradient = mode;
      zs.sampling = small_batch();
      auto solver = std::make_unique<pbrl::PbrlZeroSum<Incentive>>();
      object_does_not_allocate(*solver,
                               [&](auto& o) { return o.init(*problem, zs, *x0, Mat<S, A1>::Zero(), Mat<S, A2>::Zero()); });
      auto sweeps = std::make_unique<pbrl::PbrlZeroSum<Incentive, EvaluationMethod::sweeps>>();
      object_does_not_allocate(*sweeps,
                               [&](auto& o) { return o.init(*problem, zs, *x0, Mat<S, A1>::Zero(), Mat<S, A2>::Zero()); });
      checkpoint_does_not_allocate(*solver);
      checkpoint_does_not_allocate(*sweeps);
      for (bool learn : {true, false}) {
        pbrl::MetaGradientSettings<Real> ms;
        ms.policy.parameterization = Parameterization::softmax;
        ms.agent_steps = 2;
        ms.learn_incentive = learn;
        ms.gradient = mode;
        ms.sampling = small_batch();
        auto meta = std::make_unique<pbrl::MetaGradient<Incentive>>();
        object_does_not_allocate(*meta,
                                 [&](auto& o) { return o.init(*problem, ms, *x0, Mat<S, A1>::Zero(), Mat<S, A2>::Zero()); });
      }
    }
  }
  SUBCASE("tabular RLHF: Pbrl and DRLHF, exact and sampled; collecting labels") {
    constexpr int L = 4, C = 32;
    using Problem = pbrl::RlhfProblem<Real, S, A, L, C>;
    const auto env = std::make_unique<RandomModel<S, A>>(15, Real(0.5));
    auto buffer = std::make_unique<pbrl::PreferenceBuffer<S, A, L, C>>();
    typename Problem::Data data;
    data.transition = env->transition;
    data.initial = env->initial;
    data.lower = {RegularizerKind::entropy, Real(0.1), nullptr};
    data.preferences = buffer.get();
    auto problem = std::make_unique<Problem>();
    REQUIRE(problem->init(data) == Status::ok);
    pbrl::ReturnLabeler<Real, S, A> labeler{env->reward};
    pbrl::SegmentSampler<Real, S, A> sampler;
    REQUIRE(sampler.init(env->transition, env->initial, 16u) == Status::ok);
    const Mat<S, A> uniform = Mat<S, A>::Constant(Real(1) / A);
    Status st = Status::ok;
    for (int i = 0; i < 40; ++i) {  // past the capacity: the ring buffer overwrites
      CHECK_NO_ALLOCATION(st = sampler.collect_pair(uniform, L, labeler.labeler<L>(), *buffer));
      REQUIRE(st == Status::ok);
    }
    const auto truth = env->mdp(Real(0.9), Real(0.1));
    for (auto mode : {pbrl::GradientMode::exact, pbrl::GradientMode::sampled}) {
      CAPTURE(static_cast<int>(mode));
      pbrl_does_not_allocate<S, A>(*problem, softmax_pg_settings(mode));
      pbrl::DrlhfSettings<Real> ds;
      ds.policy_oracle = OracleKind::policy_gradient;
      ds.oracle_policy.parameterization = Parameterization::softmax;
      ds.gradient = mode;
      ds.sampling = small_batch();
      auto drlhf = std::make_unique<pbrl::Drlhf<Problem>>();
      object_does_not_allocate(*drlhf, [&](auto& o) { return o.init(*problem, ds, Problem::Params::Zero(), uniform, &truth); });
    }
  }
}
