"""What Gymnasium promises of a registered id, checked on every ``hbo/*`` id (a new id needs
no new test code): the spec serialises and round-trips (``EnvSpec.to_json`` / ``from_json``,
pickling, ``gym.make(spec)``), ``vector_entry_point`` is a loadable ``"module:function"``
string, ``gym.make_vec`` works in all three vectorization modes with ``max_episode_steps``,
re-makes from its own spec and reports ``np_random_seed`` as Gymnasium's vector envs do,
bad horizons are named, and a missing data set is a missing dependency to Gymnasium's tools.

The real-data ids read ``../shared/data`` (tests/conftest.py points ``HBO_DATA_DIR`` there).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec, load_env_creator
from gymnasium.utils.env_checker import data_equivalence

import hbo_envs
from hbo_envs.data import DataNotFoundError, clear_cache
from hbo_envs.envs.vector import GPBanditVectorEnv, VectorCreator
from hbo_envs.registration import ENV_SPECS, default_horizon, missing_data, vector_attribute

IDS = list(hbo_envs.ENV_IDS)
MODES = ("sync", "async", "vector_entry_point")


@pytest.fixture(scope="module", params=IDS)
def env_id(request: pytest.FixtureRequest) -> str:
    if need := missing_data(request.param):
        pytest.skip(f"{request.param} needs the {need!r} data set (hbo-bench data fetch {need})")
    return request.param


def _same_episode(a: gym.Env, b: gym.Env, steps: int = 6) -> None:
    """Both envs give identical resets, rewards, flags and infos for the same seed/actions."""
    assert data_equivalence(a.reset(seed=7), b.reset(seed=7))
    n = int(a.action_space.n)
    for t in range(steps):
        act = (5 * t + 1) % n
        assert data_equivalence(a.step(act), b.step(act), exact=True)


# -- the spec --------------------------------------------------------------------------------
def test_registered_spec_round_trips_through_json_and_pickle(env_id: str) -> None:
    spec = gym.spec(env_id)
    text = spec.to_json()  # raised "callables cannot be serialised" with a partial
    assert isinstance(text, str)
    back = EnvSpec.from_json(text)
    assert back == spec and back.kwargs == spec.kwargs
    assert back.vector_entry_point == spec.vector_entry_point
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert spec.pprint(disable_print=True, print_all=True).startswith(f"id={env_id}\n")


def test_vector_entry_point_is_a_loadable_module_function_string(env_id: str) -> None:
    ep = gym.spec(env_id).vector_entry_point
    assert isinstance(ep, str)
    assert ep == f"hbo_envs.envs.vector:{vector_attribute(env_id)}"
    creator = load_env_creator(ep)  # what gym.make_vec does with the string
    assert isinstance(creator, VectorCreator) and creator.env_id == env_id
    entry = next(e for e in ENV_SPECS if e.id == env_id)
    assert creator.entry_point == entry.entry_point == gym.spec(env_id).entry_point


def test_unknown_vector_creator_name_is_an_attribute_error() -> None:
    import hbo_envs.envs.vector as vector

    with pytest.raises(AttributeError, match="NoSuch_v0"):
        vector.NoSuch_v0  # noqa: B018
    assert not hasattr(vector, "__wrapped__")  # dunder look-ups never reach the id table


def test_made_specs_equal_and_round_trip(env_id: str) -> None:
    env = gym.make(env_id)
    again = gym.make(gym.spec(env_id))
    assert env.spec == again.spec  # copies of a partial compared unequal
    for spec in (env.spec, env.unwrapped.spec, gym.make(env_id, horizon=9).spec):
        assert EnvSpec.from_json(spec.to_json()) == spec
    assert env.spec.max_episode_steps == default_horizon(env_id)


def test_env_made_from_a_json_spec_is_the_same_env(env_id: str) -> None:
    env = gym.make(env_id, horizon=6)
    env = gym.wrappers.ClipReward(env, min_reward=-1.0, max_reward=2.0)
    spec = env.spec
    assert len(spec.additional_wrappers) == 1
    back = EnvSpec.from_json(spec.to_json())
    assert back == spec
    recreated = gym.make(back)
    assert isinstance(recreated, gym.wrappers.ClipReward)
    assert recreated.unwrapped.horizon == 6 and recreated.spec == spec
    _same_episode(env, recreated)


# -- make_vec --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_make_vec_every_mode_with_max_episode_steps(env_id: str, mode: str) -> None:
    """``max_episode_steps=k`` is the episode length in every mode, also on ids that register
    a ``horizon`` (hbo/GPBandit-v0, hbo/Frequency-SE-v0: the vector entry point raised)."""
    k, num = 3, 2
    envs = gym.make_vec(env_id, num_envs=num, vectorization_mode=mode, max_episode_steps=k)
    try:
        assert envs.num_envs == num
        single = gym.make(env_id, max_episode_steps=k)
        assert envs.single_action_space == single.action_space
        assert envs.single_observation_space == single.observation_space
        assert envs.action_space == gym.vector.utils.batch_space(single.action_space, num)
        obs, _ = envs.reset(seed=42)
        assert obs.shape == (num,)
        # np_random_seed as Gymnasium's own vector envs report it after reset(seed=42)
        want = (42, 43) if mode != "vector_entry_point" else 42
        assert envs.np_random_seed == want
        truncs = [envs.step(np.array([0, 1]))[3].tolist() for _ in range(k)]
        assert truncs == [[False, False]] * (k - 1) + [[True, True]]
        if mode == "vector_entry_point":
            assert isinstance(envs.unwrapped, GPBanditVectorEnv)
            assert envs.unwrapped.horizon == k
    finally:
        envs.close()


@pytest.mark.parametrize("mode", MODES)
def test_make_vec_remakes_from_its_own_spec(env_id: str, mode: str) -> None:
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, horizon=4)
    again = gym.make_vec(envs.spec)
    try:
        assert envs.spec == again.spec and type(envs) is type(again)
        assert envs.num_envs == again.num_envs
        assert envs.observation_space == again.observation_space
        assert envs.single_observation_space == again.single_observation_space
        assert envs.action_space == again.action_space
        assert envs.single_action_space == again.single_action_space
        if mode != "async":  # the vector spec also serialises (async's holds no callable)
            assert EnvSpec.from_json(envs.spec.to_json()) == envs.spec
        r1, r2 = envs.reset(seed=3), again.reset(seed=3)
        assert data_equivalence(r1, r2)
        acts = np.array([1, 2])
        assert data_equivalence(envs.step(acts), again.step(acts), exact=True)
    finally:
        envs.close()
        again.close()


def test_make_vec_default_mode_is_the_native_vector_env() -> None:
    envs = gym.make_vec("hbo/GPBandit-v0", num_envs=3)
    assert isinstance(envs, GPBanditVectorEnv) and envs.num_envs == 3
    assert envs.horizon == default_horizon("hbo/GPBandit-v0")


def test_native_np_random_seed_follows_each_int_seed() -> None:
    envs = gym.make_vec("hbo/GPBandit-v0", num_envs=2, vectorization_mode="vector_entry_point")
    for seed in (0, 42, 2**40 + 3):
        envs.reset(seed=seed)
        assert envs.np_random_seed == seed
    envs.reset(seed=[9, 10])  # a list seeds the sub-envs; the batch keeps its last seed
    assert envs.np_random_seed == 2**40 + 3
    assert [e.np_random_seed for e in envs.envs] == [9, 10]


@pytest.mark.parametrize("env", ["hbo/GPBandit-v0", "hbo/Frequency-SE-v0"])
def test_registered_horizon_is_a_default_not_a_choice(env: str) -> None:
    """On the ids that register ``horizon``: an explicit different horizon with a different
    ``max_episode_steps`` is still refused, in the native vector env as in ``gym.make``."""
    registered = gym.spec(env).kwargs["horizon"]
    for make in (
        lambda **kw: gym.make(env, **kw),
        lambda **kw: gym.make_vec(env, num_envs=2, vectorization_mode="vector_entry_point", **kw),
    ):
        assert make(max_episode_steps=4).unwrapped.horizon == 4
        assert make(horizon=registered + 1).unwrapped.horizon == registered + 1
        with pytest.raises(ValueError, match=r"'max_episode_steps' parameter .*horizon=5"):
            make(horizon=5, max_episode_steps=4)


# -- bad horizons are named (issue 37: a 2-D array failed inside the make-frame lookup) ------
BAD_HORIZONS = [np.ones((2, 2)), np.array([5]), np.array(5.5), "7", 2.5, [3], {"h": 3}]


@pytest.mark.parametrize("bad", BAD_HORIZONS, ids=repr)
def test_bad_horizon_is_named_in_make_and_make_vec(env_id: str, bad: object) -> None:
    with pytest.raises((ValueError, TypeError), match=r"'horizon' parameter .*Got"):
        gym.make(env_id, horizon=bad)
    with pytest.raises((ValueError, TypeError), match=r"'horizon' parameter .*Got"):
        gym.make(env_id, horizon=bad, max_episode_steps=5)
    with pytest.raises((ValueError, TypeError), match=r"'horizon' parameter .*Got"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", horizon=bad)


# -- missing data is a missing dependency -----------------------------------------------------
REAL = [e for e in ENV_SPECS if e.data]


@pytest.fixture()
def no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HBO_DATA_DIR", str(tmp_path))
    clear_cache()
    yield tmp_path
    clear_cache()


@pytest.mark.parametrize("entry", REAL, ids=lambda e: e.id)
def test_missing_data_is_dependency_not_installed(no_data: Path, entry: object) -> None:
    for make in (
        lambda: gym.make(entry.id),
        lambda: gym.make_vec(entry.id, num_envs=2, vectorization_mode="vector_entry_point"),
        lambda: gym.make_vec(entry.id, num_envs=2, vectorization_mode="sync"),
    ):
        with pytest.raises(gym.error.DependencyNotInstalled) as err:
            make()
        assert f"hbo-bench data fetch {entry.data}" in str(err.value)
        # what it was before, kept: code catching either still works
        assert isinstance(err.value, DataNotFoundError)
        assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, ValueError)


def test_make_every_registered_env_skips_missing_data_as_gymnasium_tools_do(
    no_data: Path,
) -> None:
    """The loop Gymnasium's own env tests run over the registry: make each spec, and warn and
    skip on ``ImportError`` / ``DependencyNotInstalled``. Without data it crashed."""
    made, skipped = [], []
    for spec in gym.registry.values():
        if not spec.id.startswith("hbo/"):
            continue
        try:
            made.append(spec.make(disable_env_checker=True).unwrapped)
        except (ImportError, gym.error.DependencyNotInstalled):
            skipped.append(spec.id)  # Gymnasium's loop warns and goes on
    assert sorted(skipped) == sorted(e.id for e in REAL)
    assert len(made) == len(IDS) - len(REAL)
