"""The floor ``benchmarks/bench_ata.py`` prints for ATA-GP-UCB-Nyström's late rounds (issue 39):
its timed calls compute what an exact new-dictionary round needs, and it adds the cheapest
alternative of each piece. (Not timed: the timings themselves are the benchmark's.)"""

import sys
from pathlib import Path

import numpy as np
import pytest

import agents

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_ata  # noqa: E402
from bench_agents import make_problem  # noqa: E402


@pytest.fixture(scope="module")
def late_agent():
    """The 100-arm SE problem of CG §6 with ``q = 20``: ``p_a < 1`` early, so the last
    round drew a new dictionary of more than ``r0`` arms, factored through ``K = L L^T``."""
    p, f = make_problem(100, 400)
    agent = agents.make("ata-gp-ucb-nystrom", q=20.0)
    agent.reset(p, seed=0)
    for t in range(300):
        a = agent.act()
        agent.update(a, float(f[a]) + 0.3 * (-1) ** t)
    assert agent.Q_.shape[0] > agent.L_.shape[1]
    return agent


def _rel(x, ref):
    return np.abs(x - ref).max() / np.abs(ref).max()


def test_the_minimal_calls_compute_the_agents_embedding_and_gram(late_agent):
    """Run once each, in order, the floor's calls give the agent's embedding in the
    dictionary's coordinates (``Q Fr = (K_D^{1/2})^+ K_DX``), its ``V~`` there, the same
    ``r x r`` Gram both ways (rank-one update of ``G``, or from the played arms'
    coordinates and counts) and the same ``Y`` folded or not."""
    calls, out = bench_ata._minimal_new_dictionary(late_agent)
    grams = {}
    for name, call in calls.items():
        call()
        if name.startswith("gram_r"):
            grams[name] = out["Gr_out"].copy()
    ag = late_agent
    assert _rel(out["Q"] @ out["Fr"], ag.Q_ @ ag.Fr_) < 1e-8
    Q, Gr = out["Q"], out["Gr"]
    assert _rel(Q @ Gr @ Q.T, ag.Q_ @ ag.Gr_ @ ag.Q_.T) < 1e-10
    assert set(grams) == {"gram_r by G", "gram_r by P"}
    for g in grams.values():
        assert _rel(g, Gr) < 1e-12
    assert _rel(out["Y_fold"], out["Y"]) < 1e-12
    np.testing.assert_allclose(out["Y"], out["B"].T @ out["Fr"], rtol=0, atol=1e-12)


def test_the_floor_adds_the_cheapest_alternative_of_each_piece():
    """Hand-made per-call seconds: the eigen-route (dsyrk 2 + dsyevx 20 + cut 3 + Q 1)
    beats the SVD route (dgesdd 40 + cut 1); every arm's coordinates folded cost
    1 + (5 - 4) = 2 < 3; V~'s Gram by P 4 < by G 6; with the gather 1:
    1 + 26 + 2 + 4 = 33, and 33 + 7 with the Cholesky QR (41 by the SVD route)."""
    t = {
        "gather": 1, "gram dsyrk": 2, "gram dgemm": 3, "eig dsyevd": 25, "eig dsyevr": 30,
        "eig dsyev": 22, "eig dsyevx": 20, "eig dsyevx[I]": 90, "cut": 3, "Q": 1,
        "svd dgesdd": 40, "svd dgesvd": 45, "svd cut": 1, "Fr": 3, "fold M": 1, "fold Y": 5,
        "early Y": 4, "gram_r by G": 6, "gram_r by P": 4, "reortho": 7, "skipped": 2,
    }  # fmt: skip
    d = bench_ata._minimal_floor(t)
    assert d["minimal"] == 33 and d["accurate"] == 40
    assert (d["route"], d["gram_call"], d["eig_driver"]) == ("A^T A", "dsyrk", "dsyevx")
    assert d["pieces"] == (1, 2, 20, 4, 2, 4) and d["skipped"] == 2
    # a cheap SVD wins the route, and needs no re-orthonormalisation
    d = bench_ata._minimal_floor({**t, "svd dgesvd": 10})
    assert d["route"] == "dgesvd" and d["minimal"] == d["accurate"] == 1 + 11 + 2 + 4
