"""A native vector env: ``k`` seeded bandit episodes stepped as one batch.

``gym.make_vec(id, num_envs=k, vectorization_mode="vector_entry_point")`` builds a
:class:`GPBanditVectorEnv` for every registered ``hbo/...`` id (the registry gives each id
this ``vector_entry_point``). It follows Gymnasium's vector conventions
(:class:`gymnasium.vector.VectorEnv`, ``AutoresetMode.NEXT_STEP``, seeds
``seed, seed + 1, ...`` for an int seed, ``info`` as arrays with ``_key`` masks) and gives
**the same numbers** as ``SyncVectorEnv`` over ``k`` single envs with the same seeds: each
sub-episode keeps its own env and ``np.random.Generator`` (so its noise stream is the
single env's), while the batch bookkeeping — the action check, the wrapper stack
``SyncVectorEnv`` puts around every sub-env (``PassiveEnvChecker``, ``OrderEnforcing``,
``TimeLimit``), the per-key info merging — is done once for the batch with numpy.
``benchmarks/bench_vector.py`` measures the speed-up.

>>> import gymnasium as gym, numpy as np, hbo_envs
>>> envs = gym.make_vec("hbo/RKHS-SE-StudentT-v0", num_envs=3,
...                     vectorization_mode="vector_entry_point", horizon=5)
>>> obs, info = envs.reset(seed=0)
>>> obs, rewards, terminated, truncated, info = envs.step(np.array([0, 10, 20]))
>>> rewards.shape, info["regret"].shape, bool(truncated.any())
((3,), (3,), False)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from hbo_envs.envs.base import GPBanditEnv, _same_int, resolve_horizon
from hbo_envs.validation import MAX_HORIZON, check_int, param_error

__all__ = ["GPBanditVectorEnv", "MAX_NUM_ENVS", "VectorCreator", "make_vector_env"]

MAX_NUM_ENVS = 100_000
"""Largest ``num_envs`` accepted (each sub-env holds its own objective and generator)."""


def _load(entry_point: str | Callable[..., Any]) -> Callable[..., Any]:
    if callable(entry_point):
        return entry_point
    module, _, attr = str(entry_point).partition(":")
    return getattr(importlib.import_module(module), attr)


class GPBanditVectorEnv(VectorEnv):
    """``num_envs`` independent episodes of one bandit env, stepped as a batch.

    ## Description
    Sub-env ``i`` is the single env ``entry_point(**kwargs)``; ``reset(seed=s)`` seeds it
    with ``s + i`` (a list seeds each one), as :class:`gymnasium.vector.SyncVectorEnv`
    does, and every step, reward, ``info`` entry and autoreset equals the ``SyncVectorEnv``
    of the same single envs (tested).

    ## Action Space
    ``MultiDiscrete([n] * num_envs)``: one arm index per sub-env (an int array).

    ## Observation Space
    ``MultiDiscrete([1] * num_envs)`` (constant zeros).

    ## Episode End
    Sub-env ``i`` is truncated after ``horizon`` rounds; the next ``step`` resets it
    (``AutoresetMode.NEXT_STEP``: its action is ignored, its reward is 0).

    ## Arguments
    - ``num_envs``: number of sub-envs, an int in ``[1, 100000]``.
    - ``entry_point``: the single env (``"module:Class"`` or a callable); the registry
      fills it in for every id.
    - ``horizon`` / ``max_episode_steps``: the episode length ``T`` (one rule with the
      single envs: both mean the same, two different values are refused).
    - ``render_mode``: as the single env's; ``render()`` returns one render per sub-env.
    - every other keyword goes to the single env.
    """

    metadata: dict[str, Any] = {
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["ansi", "rgb_array"],
    }

    def __init__(
        self,
        num_envs: int = 1,
        *,
        entry_point: str | Callable[..., Any] = "hbo_envs.envs.base:GPBanditEnv",
        max_episode_steps: int | None = None,
        **kwargs: Any,
    ) -> None:
        owner = type(self).__name__
        self.num_envs = check_int(owner, "num_envs", num_envs, 1, MAX_NUM_ENVS)
        horizon = resolve_horizon(owner, kwargs.pop("horizon", None), max_episode_steps)
        if horizon is not None:
            kwargs["horizon"] = check_int(owner, "horizon", horizon, 1, MAX_HORIZON)
        self.render_mode = kwargs.get("render_mode")
        creator = _load(entry_point)
        self.envs: list[GPBanditEnv] = [creator(**kwargs) for _ in range(self.num_envs)]
        first = self.envs[0]
        if not isinstance(first, GPBanditEnv):
            raise param_error(owner, "entry_point", "a GPBanditEnv (sub)class", entry_point)
        self.single_action_space = first.action_space
        self.single_observation_space = first.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.horizon = first.horizon
        self._n = int(first.action_space.n)
        # The batched path (one numpy call for f, regret and the batch arrays; each sub-env's
        # own generator for its noise draw) serves the envs whose step is the base one: no
        # adversary (_corrupt), no per-round f (StockPicking), no render trace. The others
        # step their sub-envs one by one. Both give the single envs' numbers (tested).
        cls = type(first)
        self._batched = (
            cls.step is GPBanditEnv.step
            and cls._corrupt is GPBanditEnv._corrupt
            and self.render_mode is None
        )
        self._f = np.zeros((self.num_envs, self._n))  # row i: f of sub-env i (this episode)
        self._f_star = np.zeros(self.num_envs)
        self._rows = np.arange(self.num_envs)
        self._obs = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    @property
    def problems(self) -> list[Any]:
        """``problem`` of each sub-env (what an agent of that episode may know)."""
        return [e.problem for e in self.envs]

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env: ``seed`` an int (``seed + i``), a list or ``None``.

        After ``reset(seed=s)`` with an int ``s``, ``np_random_seed`` is ``s``, as for
        Gymnasium's own native vector envs (``SyncVectorEnv`` reports each sub-env's).
        """
        owner = type(self).__name__
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        elif isinstance(seed, Sequence) and not isinstance(seed, str):
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise param_error(owner, "seed", f"a list of num_envs={self.num_envs} seeds", seed)
        else:
            raise param_error(owner, "seed", "an int, a list of ints or None", seed)
        # The batch's own np_random_seed is what Gymnasium's native vector envs report: the
        # int seed given (sub-env i gets seed + i); a list seeds the sub-envs only.
        super().reset(seed=int(seed) if isinstance(seed, int | np.integer) else None)
        for i, (env, s) in enumerate(zip(self.envs, seeds, strict=True)):
            env.reset(seed=s, options=options)
            self._pull_objective(i)
        self._autoreset[:] = False
        self._started = True
        return self._obs.copy(), {}

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env with its action (``AutoresetMode.NEXT_STEP``)."""
        if not self._started:
            raise RuntimeError("Call reset() before step().")
        acts = np.asarray(actions)
        if (
            acts.shape != (self.num_envs,)
            or acts.dtype.kind not in "iu"
            or (acts.size and (acts.min() < 0 or acts.max() >= self._n))
        ):
            raise param_error(
                type(self).__name__,
                "actions",
                f"an integer array of shape ({self.num_envs},) with entries in [0, {self._n - 1}]",
                actions,
            )
        if self._batched:
            return self._step_batched(acts)
        k = self.num_envs
        rewards = np.zeros(k, dtype=np.float64)
        truncated = np.zeros(k, dtype=bool)
        infos: list[dict[str, Any] | None] = [None] * k
        for i, (env, a) in enumerate(zip(self.envs, acts.tolist(), strict=True)):
            if self._autoreset[i]:
                env.reset()
                continue
            _, rewards[i], _, truncated[i], infos[i] = env.step(a)
        stepped = ~self._autoreset
        self._autoreset = truncated.copy()
        return (
            self._obs.copy(),
            rewards,
            np.zeros(k, dtype=bool),
            truncated,
            self._batch_info(infos, stepped),
        )

    def _pull_objective(self, i: int) -> None:
        """Row ``i`` of the batch's ``f`` and ``f*`` after sub-env ``i`` (re)drew its ``f``."""
        env = self.envs[i]
        self._f[i] = env._f
        self._f_star[i] = env._f_star

    def _step_batched(
        self, acts: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """:meth:`GPBanditEnv.step` for the whole batch (same numbers, see ``__init__``)."""
        k = self.num_envs
        fx = self._f[self._rows, acts]  # f(x_t) of every sub-env, one numpy call
        rewards = np.zeros(k, dtype=np.float64)
        t = np.zeros(k, dtype=np.int64)
        stepped = ~self._autoreset
        for i, (env, a, f_i) in enumerate(zip(self.envs, acts.tolist(), fx.tolist(), strict=True)):
            if self._autoreset[i]:
                env.reset()
                self._pull_objective(i)
                continue
            if env._t >= env.horizon:  # pragma: no cover - autoreset prevents it
                raise RuntimeError("sub-env episode is over; call reset()")
            # the single env's draw: same channel call, same generator, same state
            rewards[i] = env.channel.sample(f_i, a, env.np_random, env._channel_state)
            env._t += 1
            t[i] = env._t
        if not np.all(np.isfinite(rewards)):  # pragma: no cover - channels guarantee it
            raise FloatingPointError(f"non-finite reward in {rewards!r}")
        truncated = stepped & (t >= self.horizon)
        self._autoreset = truncated.copy()
        if not stepped.any():
            return self._obs.copy(), rewards, np.zeros(k, dtype=bool), truncated, {}
        zeros = np.zeros(k)
        regret = np.where(stepped, self._f_star - fx, 0.0)
        info = {
            "f": np.where(stepped, fx, 0.0),
            "regret": regret,
            "corruption": zeros,
            "corruption_used": zeros.copy(),
            "t": t,
        }
        for key in list(info):
            info["_" + key] = stepped.copy()
        return self._obs.copy(), rewards, np.zeros(k, dtype=bool), truncated, info

    def _batch_info(
        self, infos: list[dict[str, Any] | None], stepped: np.ndarray
    ) -> dict[str, Any]:
        """Gymnasium's vector info: ``info[key]`` an array, ``info["_" + key]`` its mask."""
        first = next((i for i in infos if i is not None), None)
        if first is None:
            return {}
        out: dict[str, Any] = {}
        for key, value in first.items():
            dtype = type(value) if type(value) in (int, float, bool) else object
            column = np.zeros(self.num_envs, dtype=dtype)
            column[stepped] = [i[key] for i in infos if i is not None]
            out[key] = column
            out["_" + key] = stepped.copy()
        return out

    def render(self) -> tuple[Any, ...] | None:
        """One render per sub-env (``None`` without a ``render_mode``)."""
        if self.render_mode is None:
            return None
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()


def make_vector_env(entry_point: str, num_envs: int = 1, **kwargs: Any) -> GPBanditVectorEnv:
    """The ``vector_entry_point`` the registry gives every id (with the id's single entry
    point bound): ``gym.make_vec(id, num_envs=k, vectorization_mode="vector_entry_point")``.
    """
    return GPBanditVectorEnv(num_envs, entry_point=entry_point, **kwargs)


class VectorCreator:
    """The ``vector_entry_point`` of one registered id (a module attribute of this module).

    The registry gives every id the string ``"hbo_envs.envs.vector:<name>"``
    (:func:`hbo_envs.registration.vector_entry_point`); Gymnasium loads ``<name>`` from this
    module and calls it as ``creator(num_envs=k, **registered_kwargs, **user_kwargs)``.

    One horizon rule with ``gym.make``: a ``horizon`` equal to the id's *registered*
    ``horizon`` is the id's default, not a choice, so ``gym.make_vec(id,
    max_episode_steps=k, vectorization_mode="vector_entry_point")`` gives episodes of ``k``
    rounds on ids that register a horizon (``hbo/GPBandit-v0``, ``hbo/Frequency-SE-v0``),
    as ``gym.make(id, max_episode_steps=k)`` and the sync mode do.
    """

    def __init__(self, env_id: str, entry_point: str, registered: dict[str, Any]) -> None:
        self.env_id, self.entry_point = env_id, entry_point
        self.registered_horizon = registered.get("horizon")

    def __call__(self, num_envs: int = 1, **kwargs: Any) -> GPBanditVectorEnv:
        mes = kwargs.get("max_episode_steps")
        if mes is not None and not _same_int(mes, -1):  # a TimeLimit asked for
            if _same_int(kwargs.get("horizon"), self.registered_horizon):
                kwargs.pop("horizon")
        return GPBanditVectorEnv(num_envs, entry_point=self.entry_point, **kwargs)

    def __repr__(self) -> str:
        return f"VectorCreator({self.env_id!r})"


def __getattr__(name: str) -> VectorCreator:
    """``VectorCreator`` of the registered id whose vector name is ``name`` (PEP 562)."""
    from hbo_envs.registration import entry_of_vector_attribute

    entry = None if name.startswith("__") else entry_of_vector_attribute(name)
    if entry is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return VectorCreator(entry.id, entry.entry_point, entry.kwargs)
