#!/usr/bin/env python3
"""Writes the committed models of the codegen round-trip tests (run once; the files are committed,
so neither CI nor the tests need numpy). Each model is what a firmware team would write: arrays
in their natural numpy shapes, saved with numpy.save (and numpy.savetxt for the CSV copy).

  incentive.json      incentive design in float, .npy files of float32 (<f4)
  incentive_csv.json  the same model from .csv files
  stackelberg.json    Stackelberg game in double (<f8), the follower KL-regularized to a reference
  shaping.json        reward shaping in double (<f8)
  stackelberg_estimated.json, shaping_estimated.json: the same arrays, the transition array the
                      prior of an estimate the device refines ("estimate"; float and uint16 counts)
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240601)


def distribution(*shape, dtype=np.float64):
    """Rows over the last axis that sum to one (in dtype)."""
    p = rng.uniform(0.05, 1.0, size=shape)
    return (p / p.sum(axis=-1, keepdims=True)).astype(dtype)


def save(name, array):
    np.save(os.path.join(HERE, name), array)
    return name


def manifest(name, content):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(content, f, indent=2)
        f.write("\n")


# Incentive design, float: S = 3, A1 = A2 = 2.
S, A1, A2 = 3, 2, 2
f32 = np.float32
transition = distribution(S, A1, A2, S, dtype=f32)
# One row off by half the library's tolerance for float rows of S entries (64 eps S), summed in
# float as the library sums it: the tool and the device must both still accept it.
tolerance = np.finfo(f32).eps * f32(64) * f32(S)
transition[1, 0, 1, 0] += tolerance / f32(2)
row_sum = f32(0)
for v in transition[1, 0, 1]:
    row_sum = f32(row_sum + v)
assert abs(row_sum - f32(1)) <= tolerance, row_sum
incentive = {
    "reward": rng.uniform(0, 1, (S, A1, A2)).astype(f32),
    "transition": transition,
    "initial": np.full(S, 1 / S, dtype=f32),
    "designer_reward": rng.uniform(0, 1, (S, A1, A2)).astype(f32),
    "designer_transition": distribution(S, A1, A2, S, dtype=f32),
    "designer_cost": rng.uniform(0, 0.1, S).astype(f32),
}
head = {"kind": "incentive_design", "scalar": "float", "states": S, "actions1": A1, "actions2": A2,
        "discount": 0.9}
tail = {
    "regularizer1": {"kind": "entropy", "tau": 0.1},
    "regularizer2": {"kind": "entropy", "tau": 0.1},
    "incentive": {"lower": -10, "upper": 10},
    "solver": {
        "gradient": "sampled",
        "sampling": {"horizon": 5, "batch": 4},
        "seed": 7,
        "policy": {"parameterization": "softmax", "logit_bound": 10},
        "oracle": "policy_gradient",
        "oracle_policy": {"logit_bound": 10},
        "inner_steps": 1,
        "oracle_step": 0.1,
        "step_x": 0.1,
        "step_pi": 0.1,
        "lambda_start": 4,
        "lambda_final": 4,
    },
    "ram_limit_bytes": 65536,
}
manifest("incentive.json", {"name": "incentive", **head,
                            **{k: save(f"incentive_{k}.npy", v) for k, v in incentive.items()}, **tail})
csv = {}
for k, v in incentive.items():
    # One line per last-axis row; %.18e of the float64 value of each float32 is exact.
    np.savetxt(os.path.join(HERE, f"incentive_{k}.csv"), v.astype(np.float64).reshape(-1, v.shape[-1]),
               delimiter=",")
    csv[k] = f"incentive_{k}.csv"
manifest("incentive_csv.json", {"name": "incentive_csv", **head, **csv, **tail})

# Stackelberg, double: S = 3, AL = 2, AF = 3.
S, AL, AF = 3, 2, 3
stackelberg = {
    "leader_reward": rng.uniform(-1, 1, (S, AL, AF)),
    "follower_reward": rng.uniform(-1, 1, (S, AL, AF)),
    "transition": distribution(S, AL, AF, S),
    "initial": distribution(S),
}
manifest("stackelberg.json", {
    "name": "stackelberg", "kind": "stackelberg", "scalar": "double",
    "states": S, "leader_actions": AL, "follower_actions": AF, "discount": 0.95,
    **{k: save(f"stackelberg_{k}.npy", v) for k, v in stackelberg.items()},
    "leader": {"kind": "entropy", "tau": 0.05},
    "follower": {"kind": "kl_reference", "tau": 0.1,
                 "reference": save("stackelberg_follower_reference.npy", distribution(S, AF))},
    "logit_bound": 5,
    "solver": {"penalty_kind": "bellman", "oracle": "soft_value_iteration", "inner_steps": 3,
               "step_x": 0.05, "step_y": 0.05, "lambda_final": 2.5, "lambda_ramp": 10},
})
with open(os.path.join(HERE, "stackelberg.json")) as f:
    estimated = json.load(f)
manifest("stackelberg_estimated.json", {
    **estimated, "name": "stackelberg_estimated", "scalar": "float",
    "solver": {"gap_tolerance": 0.01, "step_x": 0.05, "step_y": 0.05},
    "estimate": {"strength": 4, "count": "float", "discount": 0.99, "discount_clock": "observations",
                 "refresh_every": 50},
})

# Reward shaping, double: S = 4, A = 2.
S, A = 4, 2
shaping = {
    "reward": rng.uniform(0, 1, (S, A)),
    "transition": distribution(S, A, S),
    "initial": distribution(S),
}
manifest("shaping.json", {
    "name": "shaping", "kind": "reward_shaping", "scalar": "double", "states": S, "actions": A,
    "discount": 0.9, **{k: save(f"shaping_{k}.npy", v) for k, v in shaping.items()},
    "lower": {"kind": "entropy", "tau": 0.1},
    "upper": {"kind": "entropy", "tau": 0},
    "shaping": {"lower": -1, "upper": 1},
    "solver": {"lambda_final": 5, "inner_steps": 10},
})
with open(os.path.join(HERE, "shaping.json")) as f:
    estimated = json.load(f)
manifest("shaping_estimated.json", {
    **estimated, "name": "shaping_estimated",
    "estimate": {"strength": 2, "count": "uint16", "support": "prior", "count_cap": 1000,
                 "refresh_row_observations": 4},
})
