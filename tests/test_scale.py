"""Large candidate sets: the lazy kernel matrix, the Problem's kernel accessors, kernel-sum
objectives and envs without an n x n array, every GP agent on the played-set engine, and
sizes refused before allocating."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.gp import engine as engine_mod
from hbo_envs.kernels import LazyKernelMatrix, Matern, SquaredExponential
from hbo_envs.memory import MemoryLimitError
from hbo_envs.objectives import random_rkhs
from hbo_envs.problem import DENSE_MAX_N, Problem

ENGINE_AGENTS = [
    n
    for n in agents.available()
    if n != "random" and not n.startswith(("ata-gp-ucb", "robust-ucb"))  # robust-ucb: no kernel
]


def _problem(X, K, kernel, horizon=50):
    return Problem(X, K, kernel, B=1.0, alpha=1.0, v=2.0, nu=1.0, sup_f=1.0, horizon=horizon)


def test_kernel_accessors_agree_on_dense_and_lazy_problems():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 2))
    k = Matern(0.3, 1.5)
    dense = _problem(X, k(X), k)
    lazy = _problem(X, LazyKernelMatrix(k, X), k)
    assert lazy.kernel_is_lazy and not dense.kernel_is_lazy
    K = k(X)
    rows, cols = [3, 0, 39], [5, 5, 1, 20]
    for p in (dense, lazy):
        np.testing.assert_allclose(p.kernel_block(rows, cols), K[np.ix_(rows, cols)], atol=1e-15)
        np.testing.assert_allclose(p.kernel_columns(cols), K[:, cols], atol=1e-15)
        np.testing.assert_array_equal(p.kernel_diag(), np.ones(40))
    # On demand: the dense matrix is built when it fits, equal to the kernel's Gram matrix.
    np.testing.assert_allclose(np.asarray(lazy.kernel_matrix), K, atol=0)


def test_lazy_kernel_matrix_refuses_a_dense_copy_beyond_memory(monkeypatch):
    monkeypatch.setenv("HBO_MEMORY_LIMIT", str(10**5))
    X = np.linspace(0.0, 1.0, 200)[:, None]
    lazy = LazyKernelMatrix(SquaredExponential(0.2), X)
    with pytest.raises(MemoryLimitError, match=r"n=200 needs an estimated 320\.0 kB.*kernel_block"):
        np.asarray(lazy)
    assert lazy.block([0], [0])[0, 0] == 1.0  # blocks still work
    with pytest.raises(ValueError, match="analytic kernel"):
        LazyKernelMatrix("se", X)


def test_large_kernel_sum_objective_is_lazy_with_the_exact_norm():
    n = DENSE_MAX_N + 100
    k = SquaredExponential(0.1)
    obj = random_rkhs(np.random.default_rng(4), k, n_points=n, dim=2, n_support=30)
    assert isinstance(obj.kernel_matrix, LazyKernelMatrix) and obj.n == n
    centers, a = np.array(obj.params["centers"]), np.array(obj.params["coeffs"])
    # B = sqrt(a^T K_c a) over the support points, and f(x) = sum_i a_i k(x, c_i).
    assert obj.B == pytest.approx(float(np.sqrt(a @ k(centers) @ a)), rel=1e-12)
    idx = [0, 17, n - 1]
    np.testing.assert_allclose(obj.values[idx], k(obj.points[idx], centers) @ a, rtol=1e-12)
    assert obj.sup_f == pytest.approx(1.0, rel=1e-12)  # normalised
    # Below the threshold nothing changed: a dense, read-only matrix.
    small = random_rkhs(np.random.default_rng(4), k, n_points=300, dim=2, n_support=30)
    assert isinstance(small.kernel_matrix, np.ndarray) and small.kernel_matrix.shape == (300, 300)


def test_large_env_and_every_gp_agent_run_without_an_n_x_n_array(monkeypatch):
    import gymnasium as gym

    def refuse(self, *args, **kwargs):
        raise AssertionError("the n x n kernel matrix was built")

    monkeypatch.setattr(LazyKernelMatrix, "__array__", refuse)
    n = DENSE_MAX_N + 1
    env = gym.make(
        "hbo/GPBandit-v0",
        objective={"name": "random-rkhs", "n_points": n, "dim": 2, "n_support": 20},
        channel={"name": "student_t", "df": 3},
        horizon=12,
    )
    env.reset(seed=1)
    problem = env.unwrapped.problem
    assert problem.kernel_is_lazy and problem.n == n
    for name in ENGINE_AGENTS:
        agent = agents.make(name)
        agent.reset(problem, seed=2)
        assert agent.engine_.representation == "played", name
        env.reset(seed=1)
        for _ in range(12):
            a = agent.act()
            _, r, _, _, _ = env.step(a)
            agent.update(a, r)
        mu, width = agent.posterior()
        assert mu.shape == width.shape == (n,) and np.all(np.isfinite(mu)), name
        assert np.all(width >= 0), name


@pytest.mark.parametrize("name", ENGINE_AGENTS)
def test_every_gp_agent_plays_the_same_on_both_representations(name, monkeypatch):
    """Same seed, same env: the played-set engine gives the arm-space agent's actions
    round for round and its posterior to 1e-9 (TGP's truncation, CA-TGP's gain(),
    MoM's replicate columns, the corruption agents' and Fast-Slow's layered engines)."""
    import gymnasium as gym

    orig = engine_mod.GPPosteriorEngine.__init__
    runs = []
    for rep in ("arms", "played"):

        def init(self, *args, _rep=rep, **kwargs):
            kwargs["representation"] = _rep
            orig(self, *args, **kwargs)

        monkeypatch.setattr(engine_mod.GPPosteriorEngine, "__init__", init)
        env = gym.make("hbo/Corrupted-Fig1-v0")
        env.reset(seed=3)
        agent = agents.make(name)
        agent.reset(env.unwrapped.problem, seed=5)
        assert agent.engine_.representation == rep
        actions = []
        for _ in range(120):
            a = agent.act()
            _, r, _, _, _ = env.step(a)
            agent.update(a, r)
            actions.append(a)
        runs.append((actions, agent.posterior()))
    (a1, (mu1, w1)), (a2, (mu2, w2)) = runs
    assert a1 == a2
    np.testing.assert_allclose(mu2, mu1, rtol=0, atol=1e-9)
    np.testing.assert_allclose(w2, w1, rtol=0, atol=1e-9)


def test_too_many_points_are_refused_with_the_estimated_size(monkeypatch):
    import gymnasium as gym

    monkeypatch.setenv("HBO_MEMORY_LIMIT", str(50 * 10**6))  # 50 MB
    with pytest.raises(MemoryLimitError, match=r"random_rkhs: n_points=200000 needs an estimated"):
        gym.make(
            "hbo/GPBandit-v0",
            objective={"name": "random-rkhs", "n_points": 200_000, "dim": 2},
        )
    with pytest.raises(ValueError, match="n_points"):
        random_rkhs(np.random.default_rng(0), n_points=10**8)


@pytest.mark.parametrize("module", ["hbo_envs.memory", "hbo_envs.problem", "agents.gp.engine"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0


def test_docs_scale_page_examples_run(capsys):
    """Every ``python`` block of docs/scale.md runs and prints what its comments say."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "scale.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    assert len(blocks) >= 4
    for code in blocks:
        exec(compile(code, str(page), "exec"), {"__name__": "docs_scale"})
    out = capsys.readouterr().out
    assert "played" in out and "True (2, 2)" in out and "(20000, 1) [1. 1. 1.]" in out
    assert "n=300000 needs an estimated 720.0 GB" in out
    assert "[ 0.66666667  0.08333333 -0.5       ]" in out
    assert "[1, 2]" in out  # set_statistics: an arm without data leaves the played set
