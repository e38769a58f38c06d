#pragma once
// The settings of the paper's experiments (appendix "Additional experiment details"), and, in one
// place, the choices this project made where the paper is silent (ERRATA item 7: discount,
// regularization, initial distribution, number of outer iterations, oracle step sizes) or where
// the tabular setting has no counterpart (the RLHF experiment ran on Atari).
// Each value says where it comes from: "paper" or "choice". The experiment programs read these
// and print them with their results; docs/results.md quotes them.

namespace settings {

// ---- Shared choices (ERRATA 7) ----------------------------------------------------------------
constexpr double kDiscount = 0.9;  // choice: gamma, all experiments
// choice: rho uniform over the states in every experiment (no state is favoured).
constexpr int kHorizon = 5;        // paper: Monte-Carlo trajectory length H, all experiments

// ---- Figure 1: Stackelberg Markov game (appendix "Stackelberg Markov game") -------------------
namespace stackelberg {
constexpr int kStates = 100;             // paper: |S|
constexpr int kLeaderActions = 5;        // paper: |A_l|
constexpr int kFollowerActions = 5;      // paper: |A_f|
constexpr int kGames = 10;               // paper: random games
constexpr double kRewardSparsity = 0.7;  // paper: reward entries below 0.7 set to 0
constexpr double kStep = 0.1;            // paper: learning rate of every method (x and y)
constexpr int kBatch = 16;               // paper: B
constexpr double kValueLambda = 2;       // paper: PBRL-value lambda
constexpr int kValueInner = 1;           // paper: PBRL-value T
constexpr double kBellmanLambda = 7;     // paper: PBRL-Bellman lambda
constexpr int kBellmanInner = 10;        // paper: PBRL-Bellman T
constexpr double kFollowerTau = 0.1;     // choice: follower entropy regularization tau_f
constexpr double kLeaderTau = 0.0;       // choice: the leader is scored unregularized
constexpr double kOracleStep = 0.1;      // choice: step of PBRL's policy-gradient oracle (= the learning rate)
constexpr double kLogitBound = 10;       // choice: box of the leader's and follower's logits
constexpr long kBudget = 4800000;        // choice: environment steps per run (5000 PBRL-Bellman steps)
constexpr int kPoints = 31;              // choice: checkpoints on the environment-step axis
constexpr long kSolveSteps = 20000;      // choice: tolerance mode's cap of a solve (the budget's PBRL-value iterations)
constexpr int kQuickStates = 20;         // choice: --quick demo size (|S|; actions as above)
constexpr int kQuickGames = 3;           // choice: --quick number of games
constexpr long kQuickBudget = 1440000;   // choice: --quick environment steps per run
}  // namespace stackelberg

// ---- Figure 3: incentive design (appendix "Incentive design") ---------------------------------
namespace incentive {
constexpr int kStates = 10;              // paper: |S|
constexpr int kActions1 = 5;             // paper: |A_1|
constexpr int kActions2 = 5;             // paper: |A_2|
constexpr int kGames = 5;                // paper: random environments
constexpr double kIncentiveScale = 0.2;  // paper: r_x = r + 0.2 sigmoid(x)
constexpr double kStep = 0.1;            // paper: learning rate (x, y1, y2; meta-gradient too)
constexpr double kLambda = 4;            // paper: PBRL-NI lambda
constexpr int kBatch = 24;               // paper: B
constexpr int kInner = 1;                // paper: T, oracle steps per player (meta-gradient: agents' steps)
constexpr double kOracleStep = 0.1;      // paper: the oracle's policy-gradient learning rate
constexpr double kTau = 0.1;             // choice: entropy regularization of both agents
constexpr double kIncentiveBound = 10;   // choice: box of x (sigmoid(10) = 0.99995)
constexpr double kLogitBound = 10;       // choice: box of the agents' logits
constexpr long kBudget = 12000000;       // choice: environment steps per run (25000 PBRL-NI steps)
constexpr int kPoints = 31;              // choice: checkpoints on the environment-step axis
constexpr long kSolveSteps = 25000;      // choice: tolerance mode's cap of a solve (the budget's PBRL-NI iterations)
constexpr int kQuickGames = 2;           // choice: --quick number of environments (|S| stays 10)
constexpr long kQuickBudget = 960000;    // choice: --quick environment steps per run (2000 PBRL-NI steps)
}  // namespace incentive

// ---- Tabular RLHF (the paper's RLHF experiment is on Atari; this is its tabular analogue) ------
namespace rlhf {
constexpr int kStates = 10;              // choice
constexpr int kActions = 4;              // choice
// choice: segment length (state-action pairs). The paper compares clips of 25 steps cut from long
// Atari episodes; here a clip is one effective horizon 1/(1 - gamma) = 10 steps of a 10-state MDP.
constexpr int kSegmentLength = 10;
constexpr int kBurnIn = 0;               // choice: segments start at s ~ rho (uniform), no burn-in
constexpr double kTau = 0.01;            // paper: entropy coefficient 0.01 (learners' M_tau(x))
constexpr double kRewardSparsity = 0.7;  // choice: hidden true reward drawn as in Figure 1's games
constexpr double kRewardBound = 1;       // choice: reward model box X = [-1, 1]^{S*A} (true r in [0, 1])
// Label schedule, the paper's ratios kept (576 warm-up = 36 rounds of 16, buffer 3000 = 187.5
// rounds), with 4 pairs per round for 40 reward entries instead of 16 for a CNN:
constexpr int kPairsPerRound = 4;        // choice: paper 16 new pairs per reward epoch
constexpr int kWarmupPairs = 144;        // choice: paper 576 = 36 rounds' worth; 36 * 4
constexpr int kBufferCapacity = 750;     // choice: paper keeps the last 3000 = 187.5 rounds' worth
constexpr int kWarmupRewardSteps = 500;  // paper: reward warm-up of 500 epochs (here full-batch steps)
constexpr int kLabels = 1000;            // choice: total labels of the default run (warm-up included)
constexpr int kStepsPerRound = 5;        // choice: outer iterations (all methods) between label rounds
constexpr int kInstances = 10;           // choice: random instances (Figure 1 used 10 games)
constexpr int kHeldOutPairs = 500;       // choice: held-out pairs (uniform policy) for the accuracy
// Learners. Exact mode: PMD on M_tau(x) for DRLHF's policy, PBRL's pi-hat and the oracle.
constexpr int kInner = 5;                // choice: T, oracle steps per outer iteration (every method)
constexpr long kSolveSteps = 10000;      // choice: tolerance mode's cap of the solve after the last labels
constexpr double kOracleStep = 1;        // choice: PMD step eta (exact mode)
constexpr double kRewardStep = 0.2;      // choice: x step, PBRL's alpha_x = DRLHF's reward step
constexpr int kRewardStepsPerIteration = 1;  // choice: DRLHF reward gradient steps per iteration
constexpr double kStepY = 5;             // choice: PBRL's alpha_y (softmax y; y moves by the penalty only)
constexpr double kLambda = 1;            // choice: PBRL lambda (constant; lambda * alpha_x well below 1/L_p)
// Sampled mode: every policy learner is T sampled softmax policy-gradient steps.
constexpr int kBatch = 16;               // paper: B (Stackelberg game)
constexpr double kPgStep = 0.1;          // paper: policy-gradient learning rate 0.1 (Stackelberg, incentive)
}  // namespace rlhf

}  // namespace settings
