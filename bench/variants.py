"""Delegate variants for the A/B scripts (bench/options_ab.py,
bench/wall_split.py, bench/dispatch_floor.py, ...): the NAME:KEY=VALUE
variant syntax, one delegate + interpreter per variant, and the
alternating measurement loop they share.

A variant is NAME:KEY=VALUE,KEY=VALUE...; keys are delegate options
(README's table), or env.NAME for an environment variable set while that
variant's delegate is created (the delegate reads its knobs then).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import gles_testing as gt  # noqa: E402


def parse_variant(text: str) -> tuple[str, dict, dict]:
    name, _, rest = text.partition(":")
    options, env = {}, {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key.startswith("env."):
            env[key[4:]] = value
        else:
            options[key] = value
    return name, options, env


@contextlib.contextmanager
def environment(env: dict):
    """Sets `env` in os.environ for the block, then restores what was there."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def variant_interpreter(model, options: dict, env: dict):
    """(delegate, allocated interpreter) for one variant: `env` is set only
    while the delegate is created, when it reads its knobs."""
    with environment(env):
        delegate = gt.make_delegate(options)
        interp = gt.interpreter(model, delegate)
        interp.allocate_tensors()
    return delegate, interp


def timed(interp, inputs) -> tuple[float, list]:
    """Wall ms of set_tensor + invoke + get_tensor, and the outputs."""
    start = time.perf_counter()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    outputs = [interp.get_tensor(d["index"]) for d in interp.get_output_details()]
    return (time.perf_counter() - start) * 1e3, outputs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--model, --variant (repeated) and --iterations (per variant)."""
    parser.add_argument("--model", required=True)
    parser.add_argument("--variant", action="append", required=True)
    parser.add_argument("--iterations", type=int, default=200)


def load(model, variants: list[str]) -> list[dict]:
    """One run per variant text: name, delegate, interp, samples (empty)."""
    runs = []
    for text in variants:
        name, options, env = parse_variant(text)
        delegate, interp = variant_interpreter(model, options, env)
        runs.append({"name": name, "delegate": delegate, "interp": interp, "samples": []})
    return runs


def random_inputs(interp, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"])
            for d in interp.get_input_details()]


def alternate(runs: list[dict], inputs, measure: Callable, iterations: int,
              warmup: int = 5, block: int = 20) -> None:
    """`warmup` untimed rounds over all variants (JIT, first-touch
    allocations; each run's last result is kept in run["last"]), then blocks
    of `block` measured invokes per variant, each after one unmeasured, in
    turn, until about `iterations` per variant are in run["samples"]. Blocks,
    not single invokes: each delegate owns its EGL context, and the switch
    between interpreters costs more than a small invoke (an application runs
    one model many times in a row); alternating them makes a load change hit
    every variant alike."""
    for _ in range(warmup):
        for run in runs:
            run["last"] = measure(run["interp"], inputs)
    for _ in range(max(1, iterations // block)):
        for run in runs:
            measure(run["interp"], inputs)
            for _ in range(block):
                run["samples"].append(measure(run["interp"], inputs))
