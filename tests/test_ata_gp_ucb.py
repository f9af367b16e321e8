"""ATA-GP-UCB (Chowdhury–Gopalan 2019, Alg. 2) with QFF and Nyström embeddings.

- actions and estimates against a naive transcription of Algorithm 2 (per-observation
  truncation loops, ``t x m`` matrices, features from eq. (1) / Alg. 3 with pinv);
- QFF error against Lemma 14 on a grid of ``mbar``;
- per-arm Binomial dictionary sampling against per-observation Bernoulli sampling;
- parameter validation at ``reset``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.polynomial.hermite import hermroots, hermval
from scipy import stats

import agents
from agents.features.nystrom import (
    nystrom_features,
    sample_copies_per_arm,
    sample_copies_per_observation,
)
from agents.features.qff import qff_error, qff_error_bound, qff_features
from hbo_envs.kernels import EmpiricalKernel, Matern, SquaredExponential
from hbo_envs.problem import Problem
from tests.test_agents_reference import as_fn, assert_same, reward_stream, tie_argmax
from tests.test_agents_reference import run_agent as run_fast

# The comparisons with the naive Algorithm 2 use small mbar on purpose (eps_m is then
# large and reset warns); the warning itself is tested below.
pytestmark = pytest.mark.filterwarnings("ignore:ATAGPUCBQFF. the QFF embedding:RuntimeWarning")


def se_problem(n=12, ls=0.2, horizon=60, d=1, alpha=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = np.linspace(0, 1, n)[:, None] if d == 1 else rng.random((n, d))
    k = SquaredExponential(ls)
    return Problem(
        points=X, kernel_matrix=k(X), kernel=k, B=1.3, alpha=alpha, v=4.0, nu=3.0,
        sup_f=1.0, horizon=horizon, name="test-se",
    )  # fmt: skip


# ------------------------------------------------------------------ naive reference
def naive_qff(X, ls, mbar):
    """eq. (1) for d = 1, with nu(z) = 2^{mbar-1} mbar! / (mbar^2 H_{mbar-1}(z)^2)."""
    z = hermroots([0] * mbar + [1])
    H = hermval(z, [0] * (mbar - 1) + [1])
    nu = 2.0 ** (mbar - 1) * math.factorial(mbar) / (mbar**2 * H**2)
    arg = math.sqrt(2) / ls * X[:, :1] * z[None, :]
    return np.concatenate([np.sqrt(nu) * np.cos(arg), np.sqrt(nu) * np.sin(arg)], axis=1)


def msqrt(M):
    e, U = np.linalg.eigh(M)
    return (U * np.sqrt(np.maximum(e, 0))) @ U.T


def naive_ata(problem, reward, seed, *, kind, schedule="experiment", lam=1.0, delta=0.1,
              mbar=8, eps=0.1, dictionary=None, beta=None, b=None):  # fmt: skip
    """Algorithm 2 one round at a time: every historical reward re-truncated in every
    direction by an explicit loop over (direction, observation)."""
    K, T, rng = problem.kernel_matrix, problem.horizon, np.random.default_rng(seed)
    n, alpha, v = problem.n, problem.alpha, problem.v
    kdiag = np.diag(K)
    e = (1 - alpha) / (2 * (1 + alpha))
    B = problem.sup_f if schedule == "experiment" else problem.B
    mu, var = np.zeros(n), kdiag.copy()
    arms, ys, actions, post = [], [], [], []
    m_dim = 0  # m_{t-1}
    for t in range(1, T + 1):
        if beta is not None:
            bt = as_fn(beta)(t)
        elif kind == "qff":
            m = mbar  # 1-D: mbar^d nodes, the paper's m (Lemma 1)
            if schedule == "experiment":
                m = 2 * mbar  # the authors' code: the feature count, a cos and a sin a node
                L = math.log(m * T)
                bt = B * math.sqrt(lam) + math.sqrt(m) * v ** (1 / (1 + alpha)) * L ** (
                    alpha / (1 + alpha)) * t**e  # fmt: skip
            else:
                L = math.log(2 * m * T / delta)
                bt = B + 4 * math.sqrt(m / lam) * v ** (1 / (1 + alpha)) * L ** (
                    alpha / (1 + alpha)) * (t - 1) ** e  # fmt: skip
        else:
            mm = m_dim + 1 if schedule == "experiment" else max(m_dim, 1)
            if schedule == "experiment":
                L = math.log(max(mm * T, math.e))
                bt = B * math.sqrt(lam) + math.sqrt(mm) * v ** (1 / (1 + alpha)) * L ** (
                    alpha / (1 + alpha)) * t**e  # fmt: skip
            else:
                L = math.log(max(4 * mm * T / delta, math.e))
                lead = B * (1 + 1 / math.sqrt(1 - eps))
                bt = lead + 4 * math.sqrt(mm / lam) * v ** (1 / (1 + alpha)) * L ** (
                    alpha / (1 + alpha)) * (t - 1) ** e  # fmt: skip
        score = mu + bt * np.sqrt(np.maximum(var, 0))
        post.append((mu.copy(), bt * np.sqrt(np.maximum(var, 0))))
        a = tie_argmax(score, rng)
        actions.append(a)
        arms.append(a)
        ys.append(reward(a, t))
        # embedding phi~_t of every point: rows of F (n, m_t)
        if kind == "qff":
            F = naive_qff(problem.points, problem.kernel.lengthscale, mbar)
        else:
            counts = np.bincount(arms, minlength=n)
            D = [int(i) for i in dictionary(t, counts)]
            KD = K[np.ix_(D, D)]
            P = np.linalg.pinv(msqrt(KD), rcond=1e-6)  # (K_D^{1/2})^+
            F = (P @ K[D, :]).T
        m_dim = F.shape[1] if kind == "nystrom" else m_dim
        Phi = F[arms]  # (t, m_t)
        V = Phi.T @ Phi + lam * np.eye(F.shape[1])
        Vis = np.linalg.inv(msqrt(V))
        U = Vis @ Phi.T  # rows u_i
        if b is not None:
            level = as_fn(b)(t)
        else:
            if kind == "qff":
                Lb = math.log(2 * mbar * T) if schedule == "experiment" else math.log(
                    2 * mbar * T / delta)  # fmt: skip
            else:
                mt = F.shape[1]
                Lb = (math.log(max((mt + 1) * T, math.e)) if schedule == "experiment"
                      else math.log(max(4 * max(mt, 1) * T / delta, math.e)))  # fmt: skip
            level = (v / Lb) ** (1 / (1 + alpha)) * t**e
        r = np.zeros(U.shape[0])
        for i in range(U.shape[0]):
            for tau in range(len(ys)):
                uy = U[i, tau] * ys[tau]
                if abs(uy) <= level:
                    r[i] += uy
        theta = Vis @ r
        mu = F @ theta
        quad = lam * np.einsum("xi,ij,xj->x", F, np.linalg.inv(V), F)
        var = quad if kind == "qff" else kdiag - np.sum(F * F, axis=1) + quad
    return actions, post


def test_qff_experiment_schedules_use_the_authors_feature_count():
    """Issue 38 item 5: the authors' code puts the feature count ``m = 2 mbar^d`` (a cosine
    and a sine per Gauss-Hermite node: 64 for the paper's 1-D ``mbar = 32``) into
    ``b_t = (v/ln(mT))^{1/(1+a)} t^e`` and ``beta_t = B sqrt(lam) + sqrt(m) v^{1/(1+a)}
    ln(mT)^{a/(1+a)} t^e``; Lemma 1's theory schedule keeps the paper's ``m = mbar^d``."""
    X = np.linspace(0, 1, 20)[:, None]
    k = SquaredExponential(0.2)
    p = Problem(points=X, kernel_matrix=k(X), kernel=k, B=1.3, alpha=0.8, v=4.0, nu=3.0,
                sup_f=0.9, horizon=1000)  # fmt: skip
    agent = agents.make("ata-gp-ucb-qff", lam=2.0)
    agent.reset(p, seed=0)
    assert (agent.mbar_, agent.m_, agent.n_features_) == (32, 32, 64)
    a, v, T, m = 0.8, 4.0, 1000, 64
    e = (1 - a) / (2 * (1 + a))
    for t in (1, 7, 500):
        b = (v / math.log(m * T)) ** (1 / (1 + a)) * t**e
        beta = 0.9 * math.sqrt(2.0) + math.sqrt(m) * v ** (1 / (1 + a)) * math.log(m * T) ** (
            a / (1 + a)) * t**e  # fmt: skip
        assert agent.b_(t) == pytest.approx(b, rel=1e-13)
        assert agent.beta_(t) == pytest.approx(beta, rel=1e-13)
    theory = agents.make("ata-gp-ucb-qff", schedule="theory")
    theory.reset(p, seed=0)
    L = math.log(2 * 32 * T / 0.1)
    assert theory.b_(7) == pytest.approx((v / L) ** (1 / (1 + a)) * 7**e, rel=1e-13)


@pytest.mark.parametrize("schedule", ["experiment", "theory"])
@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_qff_matches_naive_algorithm_2(schedule, alpha):
    p = se_problem(horizon=60, alpha=alpha)
    reward = reward_stream(p, seed=3)
    fast = run_fast(agents.make("ata-gp-ucb-qff", schedule=schedule, mbar=8), p, reward, 5)
    ref = naive_ata(p, reward, 5, kind="qff", schedule=schedule, mbar=8)
    assert_same(fast, ref)
    assert len(set(fast[0])) > 3  # it explores, so the comparison covers several arms


@pytest.mark.parametrize("mbar", [6, 7])
def test_qff_truncation_is_active_and_matches_with_overrides(mbar):
    """A small constant b truncates many (direction, reward) pairs: still identical (odd
    mbar has the centre node omega = 0, a cosine without a mirror and a zero sine)."""
    p = se_problem(horizon=40)
    reward = reward_stream(p, seed=4)
    kw = {"b": 0.3, "beta": lambda t: 1.0 + 0.1 * t}
    fast = run_fast(agents.make("ata-gp-ucb-qff", mbar=mbar, **kw), p, reward, 1)
    ref = naive_ata(p, reward, 1, kind="qff", mbar=mbar, **kw)
    assert_same(fast, ref)


def _fixed_dictionary(t, counts):
    # every arm played, with 1-3 copies each (a multiset, as Alg. 3 can draw)
    played = np.flatnonzero(counts)
    return [a for a in played for _ in range(min(int(counts[a]), 1 + a % 3))]


@pytest.mark.parametrize("schedule", ["experiment", "theory"])
def test_nystrom_matches_naive_algorithm_2_with_a_fixed_dictionary(schedule):
    p = se_problem(n=10, ls=0.15, horizon=50)
    reward = reward_stream(p, seed=7)
    agent = agents.make("ata-gp-ucb-nystrom", schedule=schedule, dictionary=_fixed_dictionary)
    fast = run_fast(agent, p, reward, 2)
    ref = naive_ata(p, reward, 2, kind="nystrom", schedule=schedule, dictionary=_fixed_dictionary)
    assert_same(fast, ref)
    assert max(agent.dictionary_sizes_) > len(set(fast[0])) > 3  # repeated points, several arms


def test_nystrom_features_reduce_repeated_points_exactly():
    """phi~ = (K_D^{1/2})^+ k_D with repeated points has the same Gram matrix as the reduced
    psi = (M^{1/2})^+ C^{1/2} k_S, and the same norms of V~^{-1/2} Phi~^T per copy."""
    X = np.linspace(0, 1, 7)[:, None]
    K = SquaredExponential(0.3)(X)
    S, c = np.array([0, 3, 6]), np.array([1, 3, 2])
    D = np.repeat(S, c)
    F = np.linalg.pinv(msqrt(K[np.ix_(D, D)]), rcond=1e-8) @ K[D, :]  # (m_t, n)
    Psi = nystrom_features(K[np.ix_(S, S)], K[S, :], c)
    np.testing.assert_allclose(F.T @ F, Psi.T @ Psi, atol=1e-10)
    np.testing.assert_allclose(
        Psi.T @ Psi, K[:, S] @ np.linalg.solve(K[np.ix_(S, S)], K[S, :]), atol=1e-10
    )


# --------------------------------------------------------------------- QFF error
def test_qff_error_decays_below_lemma_14_bound():
    X = np.linspace(0, 1, 60)[:, None]
    errs = []
    for mbar in (12, 16, 20, 24, 28, 32):
        err, bound = qff_error(X, 0.2, mbar), qff_error_bound(1, mbar, 0.2)
        assert err <= bound, (mbar, err, bound)
        errs.append(err)
    assert all(b < a for a, b in zip(errs, errs[1:], strict=False))  # strictly decaying
    assert errs[-1] < 1e-10
    X2 = np.random.default_rng(1).random((40, 2))
    for mbar in (16, 20):
        assert qff_error(X2, 0.25, mbar) <= qff_error_bound(2, mbar, 0.25)


def test_qff_features_match_the_explicit_formula_and_the_kernel():
    X = np.linspace(0, 1, 9)[:, None]
    np.testing.assert_allclose(qff_features(X, 0.3, 7), naive_qff(X, 0.3, 7), atol=1e-12)
    Phi = qff_features(X, 0.3, 40)
    np.testing.assert_allclose(Phi @ Phi.T, SquaredExponential(0.3)(X), atol=1e-12)


# ------------------------------------------------------- dictionary sampling law
def test_per_arm_binomial_sampling_matches_per_observation_bernoulli():
    """Alg. 3 draws one Bernoulli(p_a) per past observation; the agent draws
    Binomial(N_a, p_a) per arm. Same law: per-arm means within 4 standard errors and a
    chi-square two-sample test on the dictionary size m_t at level 1e-3."""
    rng = np.random.default_rng(0)
    counts = np.array([0, 1, 5, 40, 3, 200])
    p = np.array([0.9, 0.5, 0.2, 0.05, 1.0, 0.01])
    arms = np.repeat(np.arange(6), counts)
    R = 4000
    a = np.array([sample_copies_per_arm(rng, counts, p) for _ in range(R)])
    b = np.array(
        [sample_copies_per_observation(rng, rng.permutation(arms), p, 6) for _ in range(R)]
    )
    sd = np.sqrt(counts * p * (1 - p) * 2 / R) + 1e-12
    assert np.all(np.abs(a.mean(0) - b.mean(0)) <= 4 * sd + 1e-12)
    assert np.all(a[:, 0] == 0) and np.all(a[:, 4] == 3) and np.all(b[:, 4] == 3)
    ma, mb = a.sum(1), b.sum(1)
    edges = np.unique(np.quantile(np.concatenate([ma, mb]), np.linspace(0, 1, 9)))
    ha = np.histogram(ma, np.r_[edges[:-1], np.inf])[0]
    hb = np.histogram(mb, np.r_[edges[:-1], np.inf])[0]
    keep = (ha + hb) > 0
    assert stats.chi2_contingency(np.array([ha[keep], hb[keep]]))[1] > 1e-3
    # and the variance matches Binomial: sum N_a p_a (1 - p_a)
    var = float(np.sum(counts * p * (1 - p)))
    assert abs(ma.var() - var) < 0.15 * var and abs(mb.var() - var) < 0.15 * var


def test_nystrom_theory_dictionary_is_per_observation_and_experiment_per_distinct_arm():
    p = se_problem(n=10, horizon=400)
    reward = reward_stream(p, seed=1)
    sizes = {}
    for schedule in ("experiment", "theory"):
        agent = agents.make("ata-gp-ucb-nystrom", schedule=schedule)
        run_fast(agent, p, reward, 0)
        sizes[schedule] = agent.dictionary_sizes_
        assert agent.m_ <= (10 if schedule == "experiment" else 400)
    assert max(sizes["experiment"]) <= 10  # at most one copy of each arm
    assert max(sizes["theory"]) > 10  # repeated points: q sigma^2 >= 1 for many draws


# ------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("ata-gp-ucb-nystrom", {"eps": 0.0},
         r"'eps' parameter of ATAGPUCBNystrom must be a real number in \[1e-100, 1.0\). Got 0.0"),
        ("ata-gp-ucb-nystrom", {"eps": 1.0}, r"'eps' .* Got 1.0"),
        ("ata-gp-ucb-nystrom", {"q": 0.0}, r"'q' parameter .* \(0.0, inf\). Got 0.0"),
        ("ata-gp-ucb-nystrom", {"q": -1}, r"'q' parameter .* Got -1"),
        ("ata-gp-ucb-nystrom", {"dictionary": 3}, r"'dictionary' parameter"),
        ("ata-gp-ucb-qff", {"mbar": 0},
         r"'mbar' parameter of ATAGPUCBQFF must be an integer in \[1, inf\]. Got 0"),
        ("ata-gp-ucb-qff", {"mbar": 2.5}, r"'mbar' parameter .* Got 2.5"),
        ("ata-gp-ucb-qff", {"lam": -1.0}, r"'lam' parameter"),
    ],
)  # fmt: skip
def test_invalid_parameters_fail_at_reset(name, params, match):
    agent = agents.make(name, **params)  # stored, not validated
    with pytest.raises(ValueError, match=match):
        agent.reset(se_problem(), seed=0)


@pytest.mark.parametrize("kernel", [Matern(0.2, 2.5), EmpiricalKernel()])
def test_qff_refuses_non_se_kernels(kernel):
    p = se_problem()
    p = p.replace(kernel=kernel)
    with pytest.raises(
        ValueError, match="needs an analytic squared-exponential kernel.*ata-gp-ucb-nystrom"
    ):
        agents.make("ata-gp-ucb-qff").reset(p, seed=0)


def test_qff_refuses_infeasible_feature_dimension_and_names_the_size():
    p = se_problem(n=50, d=5)
    with pytest.raises(ValueError, match=r"2\*mbar\^d = 67108864 features and needs .* GiB"):
        agents.make("ata-gp-ucb-qff").reset(p, seed=0)


def test_huge_rewards_give_finite_posteriors():
    p = se_problem(horizon=30)
    for name in ("ata-gp-ucb-qff", "ata-gp-ucb-nystrom"):
        agent = agents.make(name)
        agent.reset(p, seed=0)
        for t in range(30):
            a = agent.act()
            agent.update(a, 1e12 if t % 3 == 0 else -1e12)
        mu, w = agent.posterior()
        assert np.all(np.isfinite(mu)) and np.all(np.isfinite(w))


def test_qff_defaults_follow_the_paper_and_warn_when_the_embedding_is_poor():
    agent = agents.make("ata-gp-ucb-qff")
    agent.reset(se_problem(n=30, d=2, ls=0.3), seed=0)
    assert agent.mbar_ == 16 and agent.features_.shape[0] == 256  # 16^2 pairs of 2 features
    agent.reset(se_problem(), seed=0)
    assert agent.mbar_ == 32 and agent.qff_error_ < 1e-10
    # Park–Lee's 1-D domain is [-10, 10] with l = 1: QFF with mbar = 32 is no approximation
    wide = se_problem(n=50).replace(points=np.linspace(-10, 10, 50)[:, None])
    with pytest.warns(RuntimeWarning, match=r"eps_m = 0\.9\d+ .*Raise mbar"):
        agent.reset(wide.replace(kernel=SquaredExponential(1.0)), seed=0)


# ------------------------------------------- QFF with its own SE kernel (CG 2019 §6 item 3)
def test_qff_kernel_parameter_runs_on_a_lightsensor_like_problem(tmp_path, monkeypatch):
    """On LightSensor (data-derived kernel) QFF refuses unless given an SE kernel on the
    coordinates; with it, it is exactly QFF on the same problem with that SE kernel."""
    import gymnasium as gym

    import hbo_envs  # noqa: F401  (registers)
    from hbo_envs.envs.real_data import QFF_LENGTHSCALE
    from tests.test_real_data import write_lightsensor

    monkeypatch.setenv("HBO_DATA_DIR", str(tmp_path))
    write_lightsensor(tmp_path)
    p = gym.make("hbo/LightSensor-v0", horizon=25).unwrapped.problem
    assert p.kernel.name == "empirical" and p.points.shape == (41, 2)
    with pytest.raises(ValueError, match=r"analytic squared-exponential.*Pass kernel="):
        agents.make("ata-gp-ucb-qff", m=256).reset(p, seed=0)
    spec = {"name": "se", "lengthscale": QFF_LENGTHSCALE}
    agent = agents.make("ata-gp-ucb-qff", kernel=spec, m=256)
    reward = reward_stream(p, seed=2)
    got = run_fast(agent, p, reward, 3)
    assert agent.mbar_ == 16 and agent.kernel_ == SquaredExponential(QFF_LENGTHSCALE)
    assert len(set(got[0])) > 3 and all(np.isfinite(w).all() for _, w in got[1])
    k = SquaredExponential(QFF_LENGTHSCALE)
    se = p.replace(kernel=k, kernel_matrix=k(p.points))
    assert_same(got, run_fast(agents.make("ata-gp-ucb-qff", mbar=16), se, reward, 3))


def test_qff_kernel_parameter_matches_naive_algorithm_2_on_a_matern_problem():
    """kernel= replaces the problem's kernel for the embedding and the prior variance."""
    k = SquaredExponential(0.2)
    se = se_problem(horizon=40)
    matern = se.replace(kernel=Matern(0.3, 1.5), kernel_matrix=0.5 * Matern(0.3, 1.5)(se.points))
    reward = reward_stream(se, seed=3)
    fast = run_fast(agents.make("ata-gp-ucb-qff", mbar=8, kernel=k), matern, reward, 5)
    assert_same(fast, naive_ata(se, reward, 5, kind="qff", mbar=8))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"kernel": "matern"}, r"'kernel' parameter of ATAGPUCBQFF must be None .* Got 'matern'"),
        ({"kernel": Matern(0.2, 2.5)}, r"'kernel' parameter .* Got Matern"),
        ({"kernel": {"name": "se", "lengthscale": -1.0}}, r"'kernel' parameter .*'lengthscale'"),
        ({"kernel": {"name": "se", "l": 0.2}}, r"'kernel' parameter .* Got \{"),
        ({"kernel": 3}, r"'kernel' parameter .* Got 3 instead"),
        ({"m": 255}, r"'m' parameter .* be mbar\^2 for an integer mbar >= 1 .* Got 255"),
        ({"m": 0}, r"'m' parameter of ATAGPUCBQFF must be an integer in \[1, inf\]. Got 0"),
        ({"m": 16, "mbar": 16}, r"'m' parameter .* None when mbar is given"),
    ],
)  # fmt: skip
def test_qff_kernel_and_m_parameters_are_validated(params, match):
    with pytest.raises(ValueError, match=match):
        agents.make("ata-gp-ucb-qff", **params).reset(se_problem(n=20, d=2), seed=0)


@pytest.mark.parametrize(("d", "m", "mbar"), [(1, 12, 12), (2, 256, 16), (2, 9, 3), (3, 27, 3)])
def test_qff_m_is_mbar_to_the_d(d, m, mbar):
    agent = agents.make("ata-gp-ucb-qff", m=m)
    agent.reset(se_problem(n=15, d=d), seed=0)
    assert agent.mbar_ == mbar and agent.m_ == m
    if d > 1:  # in 1-D every m is mbar^1
        with pytest.raises(ValueError, match=rf"'m' .* mbar\^{d} for an integer mbar"):
            agents.make("ata-gp-ucb-qff", m=m + 1).reset(se_problem(n=15, d=d), seed=0)


# ------------------------------------- degenerate parameters (issue 22's fuzz findings)
@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("ata-gp-ucb-nystrom", {"eps": 1e-300},
         r"'eps' parameter of ATAGPUCBNystrom must be a real number in \[1e-100, 1.0\). "
         r"Got 1e-300 instead"),
        ("ata-gp-ucb-qff", {"lam": 1e-300},
         r"'lam' parameter of ATAGPUCBQFF must be a real number in \[1e-100, 1e\+100\]. "
         r"Got 1e-300 instead"),
        ("ata-gp-ucb-nystrom", {"lam": 1e300}, r"'lam' parameter .* Got 1e\+300 instead"),
        ("ata-gp-ucb-qff", {"max_bytes": 2**64},
         r"'max_bytes' parameter of ATAGPUCBQFF must be an integer in \[1, 9223372036854775807\]"),
        ("ata-gp-ucb-nystrom", {"dictionary": lambda t, c: [0.5]},
         r"'dictionary' parameter .* arm indices in \[0, 11\] \(at t=1\). Got \[0.5\]"),
        ("ata-gp-ucb-nystrom", {"dictionary": lambda t, c: ["a"]}, r"'dictionary' parameter"),
        ("ata-gp-ucb-nystrom", {"dictionary": lambda t, c: [[0, 1], [2]]},
         r"'dictionary' parameter"),
        ("ata-gp-ucb-nystrom", {"dictionary": lambda t, c: [12]}, r"'dictionary' .* Got \[12\]"),
        ("ata-gp-ucb-nystrom", {"dictionary": lambda t, c: [True]}, r"'dictionary' parameter"),
    ],
)  # fmt: skip
def test_degenerate_parameters_get_the_uniform_error(name, params, match):
    agent = agents.make(name, **params)
    with pytest.raises(ValueError, match=match):
        agent.reset(se_problem(), seed=0)
        agent.update(agent.act(), 0.3)  # the dictionary is drawn at the first update


def _run_finite(agent, problem, rounds, reward):
    agent.reset(problem, seed=0)
    for t in range(rounds):
        a = agent.act()
        agent.update(a, reward(t))
        mu, w = agent.posterior()
        assert np.all(np.isfinite(mu)) and np.all(np.isfinite(w)), (agent, t)


@pytest.mark.parametrize("name", ["ata-gp-ucb-qff", "ata-gp-ucb-nystrom"])
@pytest.mark.parametrize("schedule", ["experiment", "theory"])
@pytest.mark.parametrize(
    "params",
    [{"lam": 1e-100}, {"lam": 1e100}, {"delta": 5e-324}, {"lam": 1e-100, "delta": 5e-324}],
)
def test_parameters_at_the_ends_of_their_ranges_keep_the_posterior_finite(name, schedule, params):
    """The ends of the allowed ranges (and delta = the smallest float, whose
    ln(mT/delta) overflowed before it was taken in logs) run with finite estimates and
    widths, under rewards of 1e12."""
    agent = agents.make(name, schedule=schedule, **params)
    _run_finite(agent, se_problem(horizon=12), 12, lambda t: 1e12 * (-1) ** t)


def test_smallest_eps_puts_every_played_arm_in_the_dictionary():
    agent = agents.make("ata-gp-ucb-nystrom", eps=1e-100)
    _run_finite(agent, se_problem(horizon=15), 15, lambda t: 0.1 * t)
    assert math.isfinite(agent.q_) and agent.q_ > 1e200
    assert agent.m_ == len(agent.rewards_.played)  # q sigma^2 >= 1 for every played arm


_REAL = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 5e-324, 1e-300, 1e-100, 1e-16, 0.5, 1.0 - 1e-16, 1.0, 1e100, 1e300]),
    st.integers(-3, 10**30),
)
_QFF = {
    "lam": _REAL, "delta": _REAL, "beta": st.one_of(st.none(), _REAL),
    "b": st.one_of(st.none(), _REAL), "mbar": st.one_of(st.none(), st.integers(-2, 40)),
    "m": st.sampled_from([None, -1, 0, 1, 2, 3, 4, 16, 64, 10**12]),
    "max_bytes": st.one_of(st.integers(-1, 2**40), _REAL),
    "kernel": st.one_of(st.none(), st.builds(lambda x: {"name": "se", "lengthscale": x}, _REAL)),
}  # fmt: skip
_NYS = {
    "lam": _REAL, "delta": _REAL, "beta": st.one_of(st.none(), _REAL),
    "b": st.one_of(st.none(), _REAL), "eps": _REAL, "q": st.one_of(st.none(), _REAL),
}  # fmt: skip


def _fuzz_one(name, params, schedule):
    """Either reset refuses with the uniform error naming a parameter it was given, or
    8 rounds (rewards up to 1e12) keep every estimate and width finite."""
    agent = agents.make(name, schedule=schedule, **params)
    try:
        agent.reset(se_problem(n=9, horizon=8, d=2 if "m" in params else 1), seed=0)
    except ValueError as exc:
        msg = str(exc)
        # the uniform error, or the memory refusal (which names mbar and max_bytes)
        assert any(f"'{k}' parameter" in msg for k in params) or "max_bytes = " in msg, msg
        return
    for t in range(8):
        a = agent.act()
        agent.update(a, 1e12 if t % 3 == 0 else -0.5)
        mu, w = agent.posterior()
        assert np.all(np.isfinite(mu)) and np.all(np.isfinite(w)), (params, t)


_FUZZ = settings(
    max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@_FUZZ
@given(params=st.fixed_dictionaries({}, optional=_QFF), theory=st.booleans())
def test_fuzz_qff_parameters(params, theory):
    _fuzz_one("ata-gp-ucb-qff", params, "theory" if theory else "experiment")


@_FUZZ
@given(params=st.fixed_dictionaries({}, optional=_NYS), theory=st.booleans())
def test_fuzz_nystrom_parameters(params, theory):
    _fuzz_one("ata-gp-ucb-nystrom", params, "theory" if theory else "experiment")


def _in(lo, hi):
    return st.one_of(st.sampled_from([lo, hi]), st.floats(lo, hi))


_VALID = {
    "lam": _in(1e-100, 1e100), "delta": _in(5e-324, 1.0),
    "beta": st.one_of(st.none(), _in(0.0, 1e300)), "b": st.one_of(st.none(), _in(0.0, 1e300)),
}  # fmt: skip


@settings(max_examples=60, deadline=None, database=None)
@given(
    common=st.fixed_dictionaries({}, optional=_VALID),
    nys=st.fixed_dictionaries(
        {}, optional={"eps": _in(1e-100, 1.0 - 2**-53), "q": _in(5e-324, 1e308)}
    ),
    mbar=st.integers(1, 24),
    theory=st.booleans(),
)
def test_fuzz_allowed_values_keep_the_posterior_finite(common, nys, mbar, theory):
    """Every value inside the documented ranges runs (no refusal) with finite output."""
    schedule = "theory" if theory else "experiment"
    reward = lambda t: 1e12 if t % 3 == 0 else -0.5  # noqa: E731
    p = se_problem(n=9, horizon=8)
    _run_finite(agents.make("ata-gp-ucb-qff", schedule=schedule, mbar=mbar, **common), p, 8, reward)
    _run_finite(agents.make("ata-gp-ucb-nystrom", schedule=schedule, **common, **nys), p, 8, reward)


# ------------------------------------------------ the flat-cost machinery, piece by piece
@pytest.mark.parametrize("run_min", [4096, 3])
def test_arm_rewards_sums_match_the_definition(run_min, monkeypatch):
    """S[i, j] = sum of y at arm played[j] with |W[i, j] y| <= level[i], for thresholds
    above all, below all and between the rewards of an arm, and W = 0 entries; with one
    sorted run per arm and (RUN_MIN = 3) with pending runs, merged and not."""
    from agents.heavy_tailed.ata_gp_ucb import ArmRewards

    monkeypatch.setattr(ArmRewards, "RUN_MIN", run_min)
    rng = np.random.default_rng(0)
    R = ArmRewards(6)
    data = {a: rng.standard_t(1.5, size=c) * 3 for a, c in ((4, 1), (0, 2), (2, 140), (5, 9))}
    for a, ys in data.items():
        for y in ys:
            R.add(a, float(y))
    assert R.played == [0, 2, 4, 5] and R.count.tolist() == [2, 0, 140, 0, 1, 9]
    if run_min == 3:  # arm 2: 3, then merged at 3 + 64 and 67 + 64, 9 pending
        assert R._main.tolist() == [2, 0, 131, 0, 1, 3] and R._pend.tolist() == [0, 0, 9, 0, 0, 6]
        assert np.all(np.diff(R._abs[2][:131]) >= 0) and np.all(np.diff(R._pabs[2][:9]) >= 0)
    for a, ys in data.items():
        assert R._lo[a] == np.abs(ys).min() and R._hi[a] == np.abs(ys).max()
        np.testing.assert_allclose(R._total[a], ys.sum(), rtol=1e-12, atol=1e-12)
    W = rng.standard_normal((7, 4))
    W[1, 2] = W[3, :] = 0.0
    level = np.abs(rng.standard_normal(7)) * 2
    level[0], level[5] = 0.0, 1e300
    S = R.sums(W, level)
    want = np.array(
        [[sum(y for y in data[a] if abs(W[i, j] * y) <= level[i]) for j, a in enumerate(R.played)]
         for i in range(7)]
    )  # fmt: skip
    np.testing.assert_allclose(S, want, rtol=1e-12, atol=1e-12)
    with np.errstate(divide="ignore"):
        thr = level[:, None] / np.abs(W[:, [1]])
    assert ((thr > np.abs(data[2]).min()) & (thr < np.abs(data[2]).max())).any()  # split


@pytest.mark.parametrize("n", [0, -3, 2.5, True, "4", None])
def test_arm_rewards_refuses_a_bad_number_of_arms(n):
    from agents.heavy_tailed.ata_gp_ucb import ArmRewards

    with pytest.raises(ValueError, match=r"'n' parameter of ArmRewards must be an integer in "
                       r"\[1, inf\]. Got"):  # fmt: skip
        ArmRewards(n)


def test_arm_rewards_refuses_an_n_that_cannot_fit_before_allocating(monkeypatch):
    from agents.heavy_tailed.ata_gp_ucb import ArmRewards
    from hbo_envs.memory import MemoryLimitError

    monkeypatch.setenv("HBO_MEMORY_LIMIT", str(10**6))  # 1 MB: 12500 arms fit, 10^12 not
    assert ArmRewards(12_500).count.size == 12_500
    with pytest.raises(MemoryLimitError, match=r"ArmRewards: n=1000000000000 needs an "
                       r"estimated 80.0 TB"):  # fmt: skip
        ArmRewards(10**12)


def test_arm_rewards_insertion_moves_o_sqrt_n_entries_past_run_min(monkeypatch):
    """Flat insertion, structurally (untimed): past RUN_MIN rewards at one arm the main run
    is rebuilt only when the pending run reaches max(64, sqrt(N)), so 20000 rewards at one
    arm take ~200 merges and under 5% of the 20000^2 / 2 moves of one sorted run; the
    agent's run is the single-run one (same arms; estimates equal to rounding)."""
    from agents.heavy_tailed.ata_gp_ucb import ArmRewards

    monkeypatch.setattr(ArmRewards, "RUN_MIN", 256)
    merges = []
    merge = ArmRewards._merge
    monkeypatch.setattr(ArmRewards, "_merge", lambda self, a: merges.append(a) or merge(self, a))
    R = ArmRewards(1)
    ys = np.random.default_rng(3).standard_t(2.0, size=20_000)
    for y in ys.tolist():
        R.add(0, y)
    moved = sum(range(256)) + len(merges) * 20_000 + 20_000 * int(math.isqrt(20_000))
    assert 150 < len(merges) < 250 and moved < 0.05 * 20_000**2 / 2, (len(merges), moved)
    np.testing.assert_allclose(R._total[0], ys.sum(), rtol=1e-11)
    W, level = np.ones((1, 1)), np.array([np.median(np.abs(ys))])
    want = ys[np.abs(ys) <= level[0]].sum()
    np.testing.assert_allclose(R.sums(W, level)[0, 0], want, rtol=1e-11)

    p = se_problem(n=12, horizon=1500)
    reward = reward_stream(p, seed=2)
    runs = []
    for run_min in (10**9, 16):
        monkeypatch.setattr(ArmRewards, "RUN_MIN", run_min)
        runs.append(run_fast(agents.make("ata-gp-ucb-nystrom"), p, reward, 0))
    assert runs[0][0] == runs[1][0]
    for (m, w), (rm, rw) in zip(runs[0][1], runs[1][1], strict=True):
        np.testing.assert_allclose(m, rm, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(w, rw, rtol=1e-9, atol=1e-9)


def test_nystrom_factors_span_the_embedding_of_a_low_rank_dictionary():
    """Psi = Q Fr with Q orthonormal: the naive (M^{1/2})^+ C^{1/2} K_SX, and r < s when
    K_SS is numerically singular (many close points)."""
    from agents.features.nystrom import nystrom_factors

    X = np.linspace(0, 1, 40)[:, None]
    K = SquaredExponential(0.3)(X)
    S, c = np.arange(0, 40, 2), np.arange(1, 21) % 3 + 1
    Q, Fr = nystrom_factors(K[np.ix_(S, S)], K[S, :], c)
    assert Q.shape[1] == Fr.shape[0] < S.size  # r < s
    np.testing.assert_allclose(Q.T @ Q, np.eye(Q.shape[1]), atol=1e-12)
    sq = np.sqrt(c.astype(float))
    e, U = np.linalg.eigh(sq[:, None] * K[np.ix_(S, S)] * sq[None, :])
    keep = e > S.size * np.finfo(float).eps * e[-1]
    naive = (U[:, keep] / np.sqrt(e[keep])) @ U[:, keep].T @ (sq[:, None] * K[S, :])
    np.testing.assert_allclose(Q @ Fr, naive, atol=1e-9 * np.abs(naive).max())
    # the Nyström kernel Fr^T Fr is dominated by K (K - Fr^T Fr is PSD; equal on S)
    assert np.linalg.eigvalsh(K - Fr.T @ Fr).min() > -1e-8
    np.testing.assert_allclose((Fr.T @ Fr)[np.ix_(S, S)], K[np.ix_(S, S)], atol=1e-8)


def test_the_embedding_rank_stays_below_the_dictionary_size():
    """On 100 arms of [0, 1] (SE l = 0.2) the r x r problem replaces the s x s one."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_agents import make_problem

    p, f = make_problem(100, 300)
    agent = agents.make("ata-gp-ucb-nystrom")
    run_fast(agent, p, lambda a, t: float(f[a]) + 0.3 * (-1) ** t, 0)
    r, s = agent.Fr_.shape[0], agent.Q_.shape[0]
    assert r < s / 2 and s == agent.m_ > 20, (r, s)


def test_a_constant_dictionary_matches_naive_algorithm_2():
    """The dictionary never changes: every round after the first takes the rank-one path."""
    p = se_problem(n=10, ls=0.15, horizon=40)
    reward = reward_stream(p, seed=8)
    fixed = lambda t, counts: [1, 4, 4, 8]  # noqa: E731
    fast = run_fast(agents.make("ata-gp-ucb-nystrom", dictionary=fixed), p, reward, 3)
    assert_same(fast, naive_ata(p, reward, 3, kind="nystrom", dictionary=fixed))


def test_a_problem_without_a_kernel_matrix_gives_the_same_run(monkeypatch):
    """kernel_matrix = None (large n): kernel rows on demand, the same actions and posterior.
    (The dense run does not factor K (FACTOR_MAX_N = 0): both take the s x s path, so the
    comparison is of the kernel access alone; the factored path is tested above.)"""
    from types import SimpleNamespace

    import agents.heavy_tailed.ata_gp_ucb as ata

    monkeypatch.setattr(ata, "FACTOR_MAX_N", 0)

    p = se_problem(n=30, horizon=60)
    lazy = SimpleNamespace(**{k: getattr(p, k) for k in (
        "points", "kernel", "B", "alpha", "v", "nu", "sup_f", "horizon", "n", "dim")},
        kernel_matrix=None)  # fmt: skip
    reward = reward_stream(p, seed=5)
    for name in ("ata-gp-ucb-nystrom", "ata-gp-ucb-qff"):
        assert_same(run_fast(agents.make(name), lazy, reward, 1),
                    run_fast(agents.make(name), p, reward, 1))  # fmt: skip


def test_a_lazy_problem_gives_the_same_run_without_a_dense_matrix(monkeypatch):
    """A ``Problem`` whose kernel matrix is lazy (what envs above ``DENSE_MAX_N`` arms
    build) is read through ``kernel_diag`` / ``kernel_block``: never made dense, and the
    same actions and posterior as on the dense problem."""
    import agents.heavy_tailed.ata_gp_ucb as ata
    from hbo_envs.kernels import LazyKernelMatrix

    monkeypatch.setattr(ata, "FACTOR_MAX_N", 0)  # the same s x s path on both sides
    p = se_problem(n=30, horizon=60)
    lazy = Problem(p.points, LazyKernelMatrix(p.kernel, p.points), p.kernel, B=p.B,
                   alpha=p.alpha, v=p.v, nu=p.nu, sup_f=p.sup_f, horizon=p.horizon)  # fmt: skip
    assert lazy.kernel_is_lazy
    reward = reward_stream(p, seed=5)
    dense_runs = {n: run_fast(agents.make(n), p, reward, 1) for n in ("ata-gp-ucb-nystrom",)}

    def refuse(self, *args, **kwargs):
        raise AssertionError("the n x n kernel matrix was built")

    monkeypatch.setattr(LazyKernelMatrix, "__array__", refuse)
    for name, want in dense_runs.items():
        assert_same(run_fast(agents.make(name), lazy, reward, 1), want)


# ------------------------------------- a new dictionary: r0 x r0 work, not s x s (issue 21)
def low_rank_problem(n=24, rank=5, horizon=50, seed=0):
    """``K = Phi Phi^T`` of exact rank 5 (unit-norm rows, ``k(x, x) = 0.98``): a clean
    spectral gap, so (K_D^{1/2})^+ keeps the same eigenvalues under any threshold between
    rounding and O(1) (the naive transcription's rcond 1e-6 and our s * eps)."""
    rng = np.random.default_rng(seed)
    Phi = rng.standard_normal((n, rank))
    Phi *= np.sqrt(0.98) / np.linalg.norm(Phi, axis=1, keepdims=True)
    return Problem(
        points=np.linspace(0, 1, n)[:, None], kernel_matrix=Phi @ Phi.T,
        kernel=EmpiricalKernel("rank-5 test kernel"), B=1.3, alpha=1.0, v=4.0, nu=3.0,
        sup_f=1.0, horizon=horizon, name="test-low-rank",
    )  # fmt: skip


def _count_calls(monkeypatch, module, name):
    calls = []
    fn = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return fn(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _changing_dictionary(t, counts):
    # every arm played, 1-3 copies each, one arm left out in turn: D_t changes every round
    played = np.flatnonzero(counts)
    out = [a for a in played for _ in range(min(int(counts[a]), 1 + (a + t) % 3))]
    return [a for a in out if a != played[t % played.size]] or out


@pytest.mark.parametrize("schedule", ["experiment", "theory"])
def test_dictionaries_past_the_kernel_rank_match_naive_algorithm_2(schedule, monkeypatch):
    """s > r0 = rank(K): the dictionary is factored through K = L L^T (the r0 x r0
    eigendecomposition of L_S^T C L_S, nystrom_factors_from_factor), every round, and still
    gives Algorithm 2."""
    import agents.heavy_tailed.ata_gp_ucb as ata

    p = low_rank_problem()
    calls = _count_calls(monkeypatch, ata, "nystrom_factors_from_factor")
    reward = reward_stream(p, seed=11)
    agent = agents.make("ata-gp-ucb-nystrom", schedule=schedule, dictionary=_changing_dictionary)
    fast = run_fast(agent, p, reward, 4)
    ref = naive_ata(
        p, reward, 4, kind="nystrom", schedule=schedule, dictionary=_changing_dictionary
    )
    assert_same(fast, ref)
    assert 5 <= agent.L_.shape[1] < 10 and len(calls) > 30  # the factored path ran most rounds
    assert len(set(fast[0])) > 5


def test_factored_nystrom_equals_the_s_by_s_eigendecomposition():
    """nystrom_factors_from_factor gives the Q, Fr of nystrom_factors (up to a rotation of
    the basis): the same kept rank, the same Psi = Q Fr to 1e-10, with repeated points."""
    from agents.features.nystrom import (
        kernel_factor,
        nystrom_factors,
        nystrom_factors_from_factor,
    )

    K = low_rank_problem(n=40).kernel_matrix
    L = kernel_factor(K)
    assert 5 <= L.shape[1] < 10  # rank 5, plus eigenvalues at the rounding level of K
    np.testing.assert_allclose(L @ L.T, K, atol=1e-14)
    rng = np.random.default_rng(1)
    for s in (3, 5, 12, 30):
        S = np.sort(rng.choice(40, s, replace=False))
        for c in (np.ones(s, dtype=np.int64), rng.integers(1, 5, s)):
            Q, Fr = nystrom_factors(K[np.ix_(S, S)], K[S], c)
            Q2, Fr2, W = nystrom_factors_from_factor(L, S, c)
            np.testing.assert_array_equal(Fr2, (L @ W).T)
            assert Q2.shape == Q.shape and Fr2.shape == Fr.shape == (min(s, 5), 40)
            np.testing.assert_allclose(Q2.T @ Q2, np.eye(Q2.shape[1]), atol=1e-12)
            np.testing.assert_allclose(Q2 @ Fr2, Q @ Fr, atol=1e-10)


@pytest.mark.parametrize("schedule", ["experiment", "theory"])
def test_a_new_dictionary_costs_no_s_by_s_eigendecomposition(schedule, monkeypatch):
    """The flat-cost structure (not timed): on 100 arms whose kernel has numerical rank
    r0 ~ 21, every eigendecomposition of a round is at most r0 x r0 and there is no SVD,
    although a dictionary of s > r0 arms is drawn anew in most rounds (fails on the code
    before issue 21, which eigendecomposed each new s x s matrix M, and on its first
    version, which took the thin SVD of the s x r0 matrix C^{1/2} L_S)."""
    import sys
    from pathlib import Path

    import agents.features.nystrom as nys
    import agents.heavy_tailed.ata_gp_ucb as ata

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_agents import make_problem

    p, f = make_problem(100, 400)
    agent = agents.make("ata-gp-ucb-nystrom", schedule=schedule, q=20.0)  # p_a < 1 early
    agent.reset(p, seed=0)
    r0 = agent.L_.shape[1]
    counted = [_count_calls(monkeypatch, m, "eigh") for m in (nys, ata, np.linalg)]
    svds = _count_calls(monkeypatch, np.linalg, "svd")
    big_changes, prev = 0, None  # rounds with a new dictionary of more than r0 arms
    for t in range(400):
        a = agent.act()
        agent.update(a, float(f[a]) + 0.3 * (-1) ** t)
        big_changes += agent._dict_copies is not prev and agent.Q_.shape[0] > r0
        prev = agent._dict_copies
    assert r0 < 30 and big_changes > 100, (r0, big_changes)
    eighs = [call for calls in counted for call in calls]
    assert len(eighs) >= 400 + big_changes  # one for V~_t every round, one per dictionary
    assert max(M.shape[0] for M, *_ in eighs) <= r0
    assert not svds


def _se100():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_agents import make_problem

    return make_problem(100, 1500)


def _svd_factors(L, S, c):
    """The factored embedding by the thin SVD of ``A = C^{1/2} L_S`` (the method of
    nystrom_factors_from_factor before it formed ``A^T A``): an independent exact method."""
    A = np.sqrt(c.astype(float))[:, None] * L[S]
    U, sv, Zt = np.linalg.svd(A, full_matrices=False)
    keep = sv * sv > S.size * np.finfo(float).eps * sv[0] ** 2
    return U[:, keep], Zt[keep] @ L.T


def test_factored_nystrom_is_as_accurate_as_an_svd_on_a_kernel_with_a_rounding_level_tail():
    """On the 100-arm SE problem of CG §6 the spectrum of every ``K_SS`` decays into the
    rounding level, so the embedding (M^{1/2})^+ C^{1/2} k_S(x) is ill-conditioned in its
    last kept directions: two exact methods, the s x s eigendecomposition of M
    (nystrom_factors) and the thin SVD of C^{1/2} L_S, differ by up to ~5e-5 of max |Psi|
    (median ~1e-8). The A^T A path must be as close to the s x s one as the SVD is (max
    and median over 600 random dictionaries with and without repeated arms, within 2x),
    and keep the same rank unless the deciding eigenvalue is within 1% of the threshold
    ``s * eps * max``, with an orthonormal Q (fails without the Cholesky QR, Q = A Z
    diag(e)^{-1/2} being off orthonormal by up to ~4e-2, and with
    Fr = diag(e)^{-1/2} Q^T C^{1/2} K_SX, which divides by the tiny eigenvalues twice)."""
    from agents.features.nystrom import kernel_factor, nystrom_factors, nystrom_factors_from_factor

    p, _ = _se100()
    K = p.kernel_matrix
    L = kernel_factor(K)
    r0 = L.shape[1]
    rng = np.random.default_rng(0)
    dev = {"ata": [], "svd": []}
    for trial in range(600):
        s = int(rng.integers(r0 + 1, 90))
        S = np.sort(rng.choice(100, s, replace=False))
        c = rng.integers(1, 4, s) if trial % 2 else np.ones(s, dtype=np.int64)
        ref = nystrom_factors(K[np.ix_(S, S)], K[S], c)
        ata = nystrom_factors_from_factor(L, S, None if trial % 2 == 0 else c)
        got = {"ata": ata[:2], "svd": _svd_factors(L, S, c)}
        Q, Fr = got["ata"]
        np.testing.assert_allclose(Q.T @ Q, np.eye(Q.shape[1]), atol=1e-8)
        if Q.shape[1] != ref[0].shape[1]:
            e = np.linalg.svd(np.sqrt(c)[:, None] * L[S], compute_uv=False) ** 2
            decider = e[min(Q.shape[1], ref[0].shape[1])]
            assert abs(decider / (s * np.finfo(float).eps * e[0]) - 1) < 0.01
            continue
        if got["svd"][0].shape[1] != Q.shape[1]:
            continue
        Psi = ref[0] @ ref[1]
        for k, (Qk, Fk) in got.items():
            dev[k].append(np.abs(Qk @ Fk - Psi).max() / np.abs(Psi).max())
    assert len(dev["ata"]) > 550
    assert max(dev["ata"]) <= 2 * max(dev["svd"]), (max(dev["ata"]), max(dev["svd"]))
    assert np.median(dev["ata"]) <= 2 * np.median(dev["svd"])
    assert np.median(dev["ata"]) < 1e-7


def test_factored_nystrom_falls_back_to_an_svd_when_cholesky_fails(monkeypatch):
    """Y^T Y not numerically positive definite (forced here; not seen in practice): the
    thin SVD of C^{1/2} L_S gives the same embedding, with an orthonormal Q."""
    import agents.features.nystrom as nys

    K = low_rank_problem(n=40).kernel_matrix
    L = nys.kernel_factor(K)
    S, c = np.arange(3, 40, 2), np.arange(3, 40, 2) % 3 + 1
    want = nys.nystrom_factors_from_factor(L, S, c)
    calls = []
    monkeypatch.setattr(nys, "_dpotrf", lambda M, **kw: calls.append(M) or (M, 1))
    Q, Fr, W = nys.nystrom_factors_from_factor(L, S, c)
    np.testing.assert_allclose(Fr, (L @ W).T, atol=1e-14)
    assert calls and Q.shape == want[0].shape and Fr.shape == want[1].shape
    np.testing.assert_allclose(Q.T @ Q, np.eye(Q.shape[1]), atol=1e-12)
    np.testing.assert_allclose(Q @ Fr, want[0] @ want[1], atol=1e-10)


@pytest.mark.parametrize("schedule", ["experiment", "theory"])
def test_the_factored_dictionary_gives_the_run_of_the_s_by_s_eigendecomposition(
    schedule, monkeypatch
):
    """End to end on the 100-arm SE problem: the factored agent and the same agent without
    its factor (FACTOR_MAX_N = 0: an s x s eigendecomposition of every dictionary) play
    the same arms for 1500 rounds, with estimates and variances within 1e-5 relative
    (measured: ~8e-7, the ill-conditioning above; the s x s path itself moves its
    estimates by ~1e-7 when a dictionary is merely listed in reverse order)."""
    import agents.heavy_tailed.ata_gp_ucb as ata

    p, f = _se100()
    noise = np.random.default_rng(1).standard_t(3.0, size=1500)
    fac = agents.make("ata-gp-ucb-nystrom", schedule=schedule)
    fac.reset(p, seed=0)
    with monkeypatch.context() as m:
        m.setattr(ata, "FACTOR_MAX_N", 0)
        ref = agents.make("ata-gp-ucb-nystrom", schedule=schedule)
        ref.reset(p, seed=0)
    assert fac.L_ is not None and ref.L_ is None
    factored = 0
    for t in range(1500):
        a, b = fac.act(), ref.act()
        assert a == b, t
        prev = fac._dict_copies
        fac.update(a, float(f[a] + noise[t]))
        ref.update(a, float(f[a] + noise[t]))
        factored += fac._dict_copies is not prev and fac.Q_.shape[0] > fac.L_.shape[1]
        scale = max(1.0, np.abs(ref.mean_).max())
        np.testing.assert_allclose(fac.mean_, ref.mean_, rtol=0, atol=1e-5 * scale)
        np.testing.assert_allclose(fac.var_, ref.var_, rtol=0, atol=1e-5 * ref.var_.max())
    assert factored > 30, factored  # new dictionaries past r0 arms, factored


def test_the_kernel_factor_is_only_used_for_a_psd_low_rank_matrix():
    """An indefinite K (beyond rounding) or one of full rank is not factored: the agent
    keeps the s x s eigendecomposition of Alg. 3's K_SS itself."""
    from agents.features.nystrom import kernel_factor

    K = low_rank_problem(n=12).kernel_matrix
    assert kernel_factor(K - 1e-3 * np.eye(12)) is None
    for p, factored in ((low_rank_problem(n=12), True), (se_problem(n=8, ls=0.05), False)):
        agent = agents.make("ata-gp-ucb-nystrom")
        agent.reset(p, seed=0)
        assert (agent.L_ is not None) == factored


def _factors_before_issue_39(L, S, copies):
    """nystrom_factors_from_factor as it was at 97074f0 (before issue 39's trims), verbatim
    but for the names: the reference of the bit-identity test below."""
    from scipy.linalg.blas import dtrsm
    from scipy.linalg.lapack import dpotrf

    from agents.features.nystrom import eigh

    A = L.take(S, axis=0)
    if copies is not None:
        A *= np.sqrt(np.asarray(copies, dtype=float))[:, None]
    e, Z = eigh(A.T @ A)
    k = int(e.searchsorted(S.size * np.finfo(float).eps * max(e[-1], 0.0), side="right"))
    Z, e = np.ascontiguousarray(Z[:, k:][:, ::-1]), e[k:][::-1]
    Y = A @ Z
    R, info = dpotrf(Y.T @ Y, lower=0, clean=1)
    assert info == 0
    Q = dtrsm(1.0, R, Y, side=1, lower=0)
    W = Z @ (R / np.sqrt(e)).T
    return Q, (L @ W).T, W


class _NystromBeforeIssue39(agents.heavy_tailed.ata_gp_ucb.ATAGPUCBNystrom):
    """ATA-GP-UCB-Nyström's round as it was at 97074f0 (the code that built the archive's
    ATA cells): ``np.array_equal`` on the copies and the factoring above."""

    def _refit(self, arm):
        from agents.heavy_tailed.ata_gp_ucb import truncated_estimate

        if self.L_ is not None:
            self._G_pending.append(arm)
        copies = self._copies()
        if self._dict_copies is not None and np.array_equal(copies, self._dict_copies):
            f = self.Fr_[:, arm]
            self.Gr_ += np.outer(f, f)
        else:
            S = np.flatnonzero(copies)
            c = copies[S]
            self.m_ = int(c.sum())
            self._dict_copies = copies
            if self.L_ is not None and self.L_.shape[1] < S.size:
                ones = self.m_ == S.size
                self.Q_, self.Fr_, W = _factors_before_issue_39(self.L_, S, None if ones else c)
                self.Gr_ = W.T @ self._factor_gram() @ W
            else:
                from agents.features.nystrom import nystrom_factors

                self.Q_, self.Fr_ = nystrom_factors(*self._kernel_rows(S), c)
                P = self.rewards_.played_idx
                FrP = self.Fr_[:, P]
                self.Gr_ = (FrP * self.rewards_.count[P].astype(float)) @ FrP.T
            self.fr2_ = np.einsum("ia,ia->a", self.Fr_, self.Fr_)
            self.level_scale_ = np.sqrt(c.astype(float))
        self.dictionary_sizes_.append(self.m_)
        level = self.truncation_scale_ * self.b_(self.t_) * self.level_scale_
        self.mean_, w2 = truncated_estimate(
            self.Q_, self.Fr_, self.Gr_, self.lam_, level, self.rewards_
        )
        self.var_ = self.kdiag_ - self.fr2_ + self.lam_ * w2


@pytest.mark.parametrize("schedule", ["experiment", "theory"])
def test_the_nystrom_round_is_bit_identical_to_the_archived_code(schedule):
    """Issue 39: the archive's ATA cells are compared by action digests, so the round's
    speed-ups must not move a single bit. On the 100-arm SE problem with ``q = 20`` (most
    played arms have ``p_a < 1``: a new dictionary of more than r0 arms in most rounds,
    several copies of an arm under the theory schedule), three seeds: the same arms and
    bit for bit the same ``mu~_t`` and ``sigma~_t^2`` every round as the code before."""
    p, f = _se100()
    rounds = 500
    for seed in range(3):
        noise = np.random.default_rng(10 + seed).standard_t(2.5, size=rounds)
        fast = agents.make("ata-gp-ucb-nystrom", schedule=schedule, q=20.0)
        ref = _NystromBeforeIssue39(schedule=schedule, q=20.0)
        fast.reset(p, seed=seed)
        ref.reset(p, seed=seed)
        new = 0
        for t in range(rounds):
            a, b = fast.act(), ref.act()
            assert a == b, (seed, t)
            prev = ref._dict_copies
            y = float(f[a] + noise[t])
            fast.update(a, y)
            ref.update(a, y)
            new += ref._dict_copies is not prev
            assert fast.mean_.tobytes() == ref.mean_.tobytes(), (seed, t)
            assert fast.var_.tobytes() == ref.var_.tobytes(), (seed, t)
        assert new > rounds // 4, new  # the factoring path ran in most rounds
        if schedule == "theory":
            assert max(fast.dictionary_sizes_) > fast.Q_.shape[0]  # copies > 1 happened
