#!/usr/bin/env python3
"""The model of examples/minimal, drawn as the paper draws its incentive-design games: two agents
with 5 actions each play on 10 states; a designer with a model of its own pays them incentives.
Usage: make_model.py DIR   (writes DIR/*.npy, float32, the names model.json gives them)"""
import sys
from pathlib import Path

import numpy as np

S, A1, A2 = 10, 5, 5                 # states, actions of agent 1, actions of agent 2
rng = np.random.default_rng(7)       # fixed seed: every build makes the same model


def transition():
    """P[s, a1, a2, s']: entries uniform in [0, 1), each row normalized to sum to one."""
    p = rng.random((S, A1, A2, S))
    return p / p.sum(axis=-1, keepdims=True)


model = {
    "reward": rng.random((S, A1, A2)),               # the agents' r[s, a1, a2], uniform in [0, 1)
    "transition": transition(),                      # the agents' P
    "initial": np.full(S, 1 / S),                    # rho: every state equally likely at the start
    "designer_reward": rng.random((S, A1, A2)),      # the designer's own r_id and P_id
    "designer_transition": transition(),
}
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
for name, array in model.items():
    np.save(out / f"{name}.npy", array.astype(np.float32))  # the firmware's scalar
