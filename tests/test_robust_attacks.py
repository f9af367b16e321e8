"""Han–Scarlett attacks, their objectives and the frequency-bounded adversary (issue 19)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import hbo_envs  # noqa: F401
from hbo_envs.adversaries import make_adversary
from hbo_envs.adversaries.frequency import ClairvoyantAdversary, FrequencyLedger
from hbo_envs.adversaries.han_scarlett import (
    AggressiveSubtractionAttack,
    ClippingAttack,
    SubtractionAttack,
    bump,
)
from hbo_envs.envs.robust import FrequencyCorruptedEnv, HanScarlettEnv, rcgp_forrester_objective
from hbo_envs.objectives.han_scarlett import HS_FUNCTIONS, han_scarlett_objective

PTS = np.linspace(0, 1, 6)[:, None]
F = np.array([0.1, 0.6, -0.2, 1.0, 0.7, 0.3])
BOX = {"center": (0.1,), "side": (0.3,)}  # R = {0, 0.2}: f(x~) = 0.6


def test_clipping_in_both_sign_conventions():
    c = ClippingAttack(margin=0.05, **BOX).new_episode(F, PTS, 4.0, None)
    # maximisation: -max(0, f - (0.6 - 0.05)) outside R, 0 in R
    assert c.tolist() == pytest.approx([0, 0, 0, -0.45, -0.15, 0])
    # minimisation (Attack-BO) on g = -f: max(0, g(x~) + Delta - g) with g(x~) = min_R g
    g = -F
    gt = g[:2].min()
    c_min = np.where(np.arange(6) < 2, 0.0, np.maximum(0, gt + 0.05 - g))
    np.testing.assert_allclose(c, -c_min)  # observing -(g + c_min) = f + c


def test_aggressive_subtraction_defaults_to_the_gap():
    c = AggressiveSubtractionAttack(**BOX).new_episode(F, PTS, 4.0, None)
    assert c.tolist() == pytest.approx([0, 0, -0.4, -0.4, -0.4, -0.4])  # gap 1.0 - 0.6


def test_bumps_and_subtraction_at_the_optimum():
    z = np.array([[0.0], [0.5], [0.999], [1.0], [-2.0]])
    np.testing.assert_allclose(bump(z, "rnd")[:2], [1.0, math.exp(-1 / 0.75 + 1)])
    assert bump(z, "rnd")[3:].tolist() == [0.0, 0.0] and bump(z, "rnd")[2] < 1e-200
    assert bump(z, "sq").tolist() == [1, 1, 1, 0, 0]
    c = SubtractionAttack(shape="sq", width=(0.25,)).new_episode(F, PTS, 4.0, None)
    assert c.tolist() == pytest.approx([0, 0, -1.2, -1.2, -1.2, 0])  # h = 1.0 - (-0.2)


def test_random_attack_moments_monte_carlo():
    env = HanScarlettEnv("forrester", "random", std=0.3, C=1e9, sigma=0.0, horizon=4000)
    env.reset(seed=1)
    c = np.array([env.step(0)[4]["corruption"] for _ in range(4000)])
    # mean 0 (se 0.3/sqrt(4000) = 0.0047), variance 0.09 (se ~ 0.09 sqrt(2/4000) = 0.002)
    assert abs(c.mean()) < 4 * 0.3 / math.sqrt(4000)
    assert abs(c.var() - 0.09) < 4 * 0.09 * math.sqrt(2 / 4000)


def test_region_and_shape_errors_name_the_parameter():
    with pytest.raises(ValueError, match="'side' parameter of ClippingAttack"):
        ClippingAttack(center=(0.0,), side=(-1.0,))
    with pytest.raises(ValueError, match="'shape' parameter of SubtractionAttack"):
        SubtractionAttack(shape="round")
    with pytest.raises(ValueError, match="'center/side' parameter of ClippingAttack"):
        ClippingAttack(center=(5.0,), side=(0.1,)).new_episode(F, PTS, 1.0, None)
    with pytest.raises(ValueError, match="'attack' parameter of HanScarlettEnv"):
        gym.make("hbo/HS-Forrester-None-v0", attack="ppo")
    with pytest.raises(ValueError, match="'T_c' parameter of FrequencyCorruptedEnv"):
        FrequencyCorruptedEnv("chowdhury-gopalan", T_c=-1)
    assert make_adversary({"name": "clipping", **BOX}).name == "clipping"


@pytest.mark.parametrize(
    "name, g_star",
    [
        ("forrester", -6.02074),
        ("branin", 0.397887),
        ("camelback", -1.0316285),
        ("bohachevsky", 0.0),
        ("levy", 0.0),
        ("hartmann6", -3.32237),
    ],
)
def test_objectives_optimum_and_region(name, g_star):
    spec = HS_FUNCTIONS[name]
    assert spec.g(np.array([spec.x_min]))[0] == pytest.approx(g_star, abs=1e-4)
    obj = han_scarlett_objective(name)
    s = obj.params["scale"]
    assert obj.sup_f == pytest.approx(1.0)
    assert -obj.f_star * s >= g_star - 1e-9  # the grid cannot beat the true minimum
    lo, hi = np.array(obj.params["region_lo"]), np.array(obj.params["region_hi"])
    inside = np.all((obj.points >= lo) & (obj.points <= hi), axis=1)
    assert obj.params["f_region"] == np.max(obj.values[inside])


def test_hs_env_reports_target_hits_and_spends_the_budget():
    env = gym.make("hbo/HS-Forrester-Clipping-v0", C=0.5).unwrapped
    env.reset(seed=0)
    star = env.objective.argmax
    infos = [env.step(star)[4] for _ in range(3)]
    gap = env.objective.f_star - env.objective.params["f_region"]
    assert infos[0]["corruption"] == pytest.approx(-gap) and not infos[0]["in_target"]
    assert infos[-1]["corruption_used"] == pytest.approx(0.5)  # budget spent, then stops
    assert infos[-1]["corruption"] == 0.0
    assert env.step(0)[4]["in_target"]


def test_frequency_ledger_counts_rounds_and_caps_magnitude():
    led = FrequencyLedger(T_c=2, max_abs=1e15)
    assert led.charge(np.array([0.0, -1e300]), 1) == -1e15
    assert led.charge(np.array([0.0, 0.0]), 1) == 0.0 and led.rounds == 1
    assert led.charge(np.array([3.0, 0.0]), 0) == 3.0 and led.remaining == 0
    assert led.charge(np.array([3.0, 0.0]), 0) == 0.0 and led.n_clipped == 1
    assert led.used == 1e15 + 3.0


def test_clairvoyant_near_far_and_finite_rewards():
    obj = rcgp_forrester_objective()
    adv = ClairvoyantAdversary(near=0.2, far=0.5, high=1e12, low=-1e12)
    c = adv.new_episode(obj.values, obj.points, 1e15, None)
    x = obj.points[:, 0]
    assert np.all(c[x > 0.8] + obj.values[x > 0.8] == -1e12)
    assert np.all(c[x < 0.5] + obj.values[x < 0.5] == 1e12)
    assert np.all(c[(x >= 0.5) & (x <= 0.8)] == 0)
    env = FrequencyCorruptedEnv(obj, "gaussian", T_c=3, horizon=10)
    env.reset(seed=0)
    ys = [env.step(199)[1] for _ in range(10)]
    assert all(math.isfinite(y) for y in ys) and sum(abs(y) > 1e11 for y in ys) == 3
    assert env.problem.C is None and env.problem.meta["T_c"] == 3
