"""The generic kernelized-bandit environment every registered ``hbo/...`` id builds on."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import sys
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from hbo_envs.channels import RewardChannel, make_channel
from hbo_envs.objectives import OBJECTIVES, Objective
from hbo_envs.problem import Problem
from hbo_envs.validation import (
    MAX_HORIZON,
    ParameterTypeError,
    check_bool,
    check_choice,
    check_index,
    check_int,
    param_error,
)

__all__ = ["GPBanditEnv", "ObjectiveSpec", "refuse_unknown_kwargs", "resolve_horizon"]

_OBS = np.int64(0)  # the constant placeholder observation

ObjectiveSpec = Objective | str | dict[str, Any] | Callable[[np.random.Generator], Objective]


def refuse_unknown_kwargs(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap an env's ``__init__`` so an unknown keyword gets the uniform error.

    Python's own "got an unexpected keyword argument" names neither the value nor the
    accepted parameters; this names the env, the parameter, its value and every parameter
    the env has (so ``redraw="false"`` on an env without ``redraw`` says so). The
    signature is kept (``functools.wraps``), so ``inspect.signature`` still lists the
    real parameters. Applied to :class:`GPBanditEnv` and, by ``__init_subclass__``, to
    every subclass that defines its own ``__init__``.
    """
    params = inspect.signature(init).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return init
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    names.discard("self")

    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - names - {"render_mode"})
        if unknown:
            bad = unknown[0]
            # TypeError, and Python's phrase kept: gymnasium.make relies on both (render_mode)
            raise ParameterTypeError(
                f"{type(self).__name__} got an unexpected keyword argument {bad!r}: it has no "
                f"parameter {bad!r}; its parameters are {', '.join(sorted(names, key=str.lower))}."
                f" Got {bad}={kwargs[bad]!r} instead."
            )
        render_mode = None
        if "_hbo_init_started" not in self.__dict__:  # the outermost __init__ of the chain
            self.__dict__["_hbo_init_started"] = True
            # render_mode is Gymnasium's keyword: every env takes it, here in one place
            render_mode = check_choice(
                type(self).__name__,
                "render_mode",
                kwargs.pop("render_mode", None),
                (None, *type(self).metadata.get("render_modes", ())),
            )
            if "horizon" in names and not args:
                limit = _time_limit_of_enclosing_make(type(self).__name__, kwargs)
                if limit is not None:
                    kwargs["horizon"] = limit
            init(self, *args, **kwargs)
            self.render_mode = render_mode
            return
        init(self, *args, **kwargs)

    return wrapper


def resolve_horizon(owner: str, horizon: Any, max_episode_steps: Any) -> int | None:
    """The one horizon rule: ``horizon`` and ``max_episode_steps`` name the same ``T``.

    Returns the episode length when either is given (``None`` when neither is). Both
    given and different is refused with the uniform error; ``max_episode_steps=-1``
    (Gymnasium's "no TimeLimit") counts as not given. Used by every env (through
    :func:`refuse_unknown_kwargs`) and by :class:`hbo_envs.envs.vector.GPBanditVectorEnv`.

    >>> resolve_horizon("Env", None, 7), resolve_horizon("Env", 7, None)
    (7, 7)
    >>> resolve_horizon("Env", 5, 7)
    Traceback (most recent call last):
    ...
    ValueError: The 'max_episode_steps' parameter of Env must be equal to horizon=5 (...
    """
    if max_episode_steps is None or (
        not isinstance(max_episode_steps, bool) and max_episode_steps == -1
    ):
        return None if horizon is None else check_int(owner, "horizon", horizon, 1, MAX_HORIZON)
    mes = check_int(owner, "max_episode_steps", max_episode_steps, 1, MAX_HORIZON)
    if horizon is not None:
        h = check_int(owner, "horizon", horizon, 1, MAX_HORIZON)
        if h != mes:
            raise param_error(
                owner,
                "max_episode_steps",
                f"equal to horizon={h} (both are the episode length T: the problem's horizon, "
                "the agents' schedules and the TimeLimit must agree; pass one of them)",
                max_episode_steps,
            )
    return mes


def _time_limit_of_enclosing_make(owner: str, kwargs: dict[str, Any]) -> int | None:
    """The TimeLimit ``gymnasium.make`` is about to put on the env being built, if any.

    ``gym.make(id, max_episode_steps=k)`` consumes ``k`` itself (the env never sees it) and
    wraps the env in ``TimeLimit(k)`` after building it. So that ``problem.horizon``, the
    agents' schedules and the TimeLimit agree, the env reads ``k`` from the ``make`` call
    that is building it (the nearest ``gymnasium.envs.registration.make`` frame) and
    takes it as its horizon; an explicit ``horizon=`` that differs is refused
    (:func:`resolve_horizon`). Outside ``gym.make`` (direct construction) this is None.
    """
    from gymnasium.envs import registration as reg

    code = reg.make.__code__
    frame = sys._getframe(2)
    for _ in range(12):  # make -> creator -> (wrapped) __init__: a few frames up at most
        if frame is None:
            return None
        if frame.f_code is code:
            loc = frame.f_locals
            mes = loc.get("max_episode_steps")
            spec = loc.get("env_spec")
            if mes is None and spec is not None:
                mes = getattr(spec, "max_episode_steps", None)
            horizon = (loc.get("kwargs") or {}).get("horizon")  # what the caller passed
            registered = gym.registry.get(getattr(spec, "id", None))
            if registered is not None and _same_int(horizon, registered.kwargs.get("horizon")):
                horizon = None  # the registered default (make_vec re-passes it), not a choice
            return resolve_horizon(owner, horizon, mes)
        frame = frame.f_back
    return None


def _same_int(value: Any, registered: Any) -> bool:
    """``value == registered`` for two plain ints: never an elementwise array comparison (a
    ``horizon`` given as an array must reach :func:`resolve_horizon`'s named error)."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and isinstance(registered, int)
        and value == registered
    )


_POSITIVE = "positive_values"
"""Attribute a callable objective generator may carry (``True``): every draw has f > 0."""


def _positive_family(name: str, params: dict[str, Any]) -> bool:
    """Whether *every* draw of a named random objective has ``f > 0`` on its candidates.

    True for the kernel sums with ``coeffs="positive"`` whose kernel stays positive (no
    underflow to 0) across the whole domain ``[0, 1]^dim``: then ``f(x) = sum_i a_i k(x, x_i)``
    with ``a_i >= 0`` (not all zero) is positive at every point, for every draw.
    """
    if name not in ("random-rkhs", "chowdhury-gopalan") or params.get("coeffs") != "positive":
        return False
    from hbo_envs.kernels import Matern, SquaredExponential, make_kernel

    try:
        if name == "random-rkhs":
            k = make_kernel(params.get("kernel", "se"))
            dim = int(params.get("dim", 1))
        else:
            ls = params.get("lengthscale", 0.2)
            k = (
                SquaredExponential(ls)
                if params.get("kernel", "se") == "se"
                else Matern(ls, params.get("matern_nu", 2.5))
            )
            dim = 1
        far = k(np.zeros((1, dim)), np.ones((1, dim)))[0, 0]  # k at the domain's diameter
    except (TypeError, ValueError):
        return False  # invalid parameters: the generator itself reports them
    return bool(far > 0)


class _Fixed:
    """``rng -> objective``: always the same objective (a plain class, so envs pickle)."""

    def __init__(self, objective: Objective) -> None:
        self.objective = objective

    def __call__(self, rng: np.random.Generator) -> Objective:
        return self.objective


class _Named:
    """``rng -> OBJECTIVES[name](rng, **params)``, looked up by name so envs pickle."""

    def __init__(self, name: str, params: dict[str, Any]) -> None:
        self.name, self.params = name, params

    def __call__(self, rng: np.random.Generator) -> Objective:
        return OBJECTIVES[self.name](rng, **self.params)


def _objective_factory(
    spec: ObjectiveSpec,
) -> tuple[Callable[[np.random.Generator], Objective], bool, bool]:
    """``(draw, random, positive)``: a function ``rng -> Objective``, whether it depends on
    ``rng``, and whether every draw is known to have ``f > 0``."""
    if isinstance(spec, Objective):
        return _Fixed(spec), False, bool(np.min(spec.values) > 0)
    if isinstance(spec, str):
        spec = {"name": spec}
    if isinstance(spec, dict):
        name = spec.get("name")
        if not isinstance(name, str) or name not in OBJECTIVES:
            raise ValueError(
                f"The 'objective' parameter must name one of {sorted(OBJECTIVES)} (or be an "
                f"Objective or a callable rng -> Objective). Got {spec!r} instead."
            )
        params = {k: v for k, v in spec.items() if k != "name"}
        return (
            _Named(name, params),
            not name.startswith("griewank"),
            _positive_family(name, params),
        )
    if callable(spec):
        return spec, True, getattr(spec, _POSITIVE, False) is True
    raise ValueError(
        f"The 'objective' parameter must be an Objective, a name, a dict or a callable. "
        f"Got {spec!r} instead."
    )


class GPBanditEnv(gym.Env[np.int64, np.int64]):
    """A kernelized bandit over a finite candidate set with a configurable reward channel.

    ## Description
    Each round the agent picks one of ``n`` candidate points ``x_t`` and observes a payoff
    ``y_t`` whose mean is ``f(x_t)``; the noise comes from a reward channel
    (:mod:`hbo_envs.channels`). The agent's knowledge is ``env.unwrapped.problem``
    (:class:`~hbo_envs.problem.Problem`): the candidate set, the kernel and the problem
    constants ``B, alpha, v, nu`` — computed exactly for the drawn objective.

    ## Action Space
    ``Discrete(n)``: the index of a point of ``problem.points``. Anything else (a float,
    a bool, NaN, out of range) raises ``ValueError``/``TypeError`` and leaves the env
    unchanged.

    ## Observation Space
    ``Discrete(1)``: a bandit has no state; the observation is always ``0``.

    ## Rewards
    The observed payoff ``y_t`` (noisy, heavy-tailed, possibly corrupted); always a finite
    float.

    ## Episode End
    ``truncated=True`` after ``horizon`` rounds; never ``terminated``. ``horizon`` is the
    episode length everywhere: ``gym.make(id, max_episode_steps=k)`` sets it to ``k`` (the
    same as ``horizon=k``; two different values are refused, :func:`resolve_horizon`) and
    ``env.spec.max_episode_steps`` states it.

    ## Info
    Only for the harness (an agent must not read it): ``f`` (``f(x_t)``), ``regret``
    (``f* - f(x_t)``), ``corruption`` (``c_t(x_t)``, 0 without an adversary),
    ``corruption_used`` (running ``sum_t max_x |c_t(x)|``) and ``t`` (rounds played).

    ## Arguments
    - ``objective``: a name in :data:`hbo_envs.objectives.OBJECTIVES` (``"random-rkhs"``,
      ``"chowdhury-gopalan"``, ``"park-lee-rkhs1d"``, ``"griewank2d"``, ``"griewank5d"``), a
      dict ``{"name": ..., **params}``, an :class:`~hbo_envs.objectives.Objective`, or a
      callable ``rng -> Objective``.
    - ``channel``: a :class:`~hbo_envs.channels.RewardChannel`, a name or a dict.
    - ``horizon``: rounds per episode ``T``.
    - ``redraw``: draw a new objective at every ``reset`` from the env's generator
      (papers that "evaluate each trial on a different f"); when false the objective is
      drawn once from ``objective_seed`` and kept. Defaults to true for random generators.
      Must be a bool (``"false"`` is refused). A channel that needs ``f > 0`` (Pareto)
      is refused with a redrawn objective unless the family is always positive
      (``coeffs="positive"`` with a kernel that does not underflow on the domain).
    - Bad values of any argument raise ``ValueError``/``TypeError`` naming it, at
      construction; ``horizon`` is at most ``10**9``.
    - ``objective_seed``: seed of the objective drawn at construction.
    - ``render_mode`` (every env): ``None``, ``"ansi"`` or ``"rgb_array"`` (:meth:`render`).

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, hbo_envs
    >>> env = gym.make("hbo/GPBandit-v0", channel={"name": "student_t", "df": 3}, horizon=5)
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(3)
    >>> sorted(info)
    ['corruption', 'corruption_used', 'f', 'regret', 't']
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    render_mode: str | None = None

    @property
    def spec(self) -> EnvSpec | None:  # type: ignore[override]
        """Gymnasium's ``EnvSpec`` of this env, with ``max_episode_steps`` = its horizon.

        ``gym.make`` sets the spec; the horizon is the env's episode length whichever way it
        was given (``horizon=`` or ``max_episode_steps=``), so the spec states it too.
        """
        spec = self.__dict__.get("_spec")
        if spec is not None and spec.max_episode_steps != self.horizon:
            spec = dataclasses.replace(spec, max_episode_steps=self.horizon)
        return spec

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        self.__dict__["_spec"] = value

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:  # every env refuses unknown keywords the same way
            cls.__init__ = refuse_unknown_kwargs(cls.__dict__["__init__"])  # type: ignore[method-assign]

    @refuse_unknown_kwargs
    def __init__(
        self,
        objective: ObjectiveSpec = "random-rkhs",
        channel: RewardChannel | str | dict[str, Any] = "gaussian",
        horizon: int = 1000,
        redraw: bool | None = None,
        objective_seed: int = 0,
        name: str = "",
    ) -> None:
        owner = type(self).__name__
        # Every env is a GPBanditEnv, so these checks cover the registered ids and any
        # env merged later: flags are bools (bool("false") is True), sizes are bounded.
        redraw = check_bool(owner, "redraw", redraw, allow_none=True)
        self.horizon = check_int(owner, "horizon", horizon, 1, MAX_HORIZON)
        self.objective_seed = check_int(owner, "objective_seed", objective_seed, 0, 2**63 - 1)
        if not isinstance(name, str):
            raise param_error(owner, "name", "a string", name)
        self._draw, random, positive = _objective_factory(objective)
        self.redraw = random if redraw is None else redraw
        self.channel = make_channel(channel)
        if self.redraw and self.channel.requires_positive_f and not positive:
            # The channel's assumption must hold for every f a reset can draw, not only
            # for the one drawn now: refused at make, not at the 100th reset.
            raise param_error(
                owner,
                "channel",
                "a channel whose assumption holds for every objective the env can draw: "
                f"{type(self.channel).__name__} needs f(x) > 0, but the objective is redrawn "
                "at every reset from a family that can take values <= 0. Use an objective "
                "family that is always positive (e.g. {'name': 'random-rkhs', 'coeffs': "
                "'positive'}), a callable generator marked positive_values=True, or "
                "redraw=False",
                self.channel.params(),
            )
        self.name = name or owner
        self._set_objective(self._draw(np.random.default_rng(self.objective_seed)))
        self.action_space = spaces.Discrete(self.objective.n)
        self.observation_space = spaces.Discrete(1)
        self._t: int | None = None  # None until the first reset
        self._channel_state: Any = None
        self._corruption_used = 0.0
        self._trace: list[tuple[int, float, float, float]] | None = None  # rendering only
        self.agent: Any = None  # an agent attached for rendering its posterior band

    # -- problem construction ---------------------------------------------------------
    def _set_objective(self, obj: Objective) -> None:
        self.channel.validate(obj.values)  # refuse e.g. Pareto with f <= 0, clearly
        m = self.channel.moments(obj.values)
        self.objective = obj
        self._f = np.asarray(obj.values)
        self._f_list = [float(x) for x in obj.values]  # Python floats: fast per-step lookup
        self._f_star = obj.f_star
        self.problem = Problem(
            points=obj.points,
            kernel_matrix=obj.kernel_matrix,
            kernel=obj.kernel,
            B=obj.B,
            alpha=m.alpha,
            v=m.v,
            nu=m.nu,
            sup_f=obj.sup_f,
            horizon=self.horizon,
            C=None,
            noise_scale=m.noise_scale,
            kernel_jitter=obj.kernel_jitter,
            name=self.name,
            meta={"objective": obj.name, "channel": self.channel.params()},
        )

    # -- gymnasium API ------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.int64, dict[str, Any]]:
        super().reset(seed=seed)
        if self.redraw:
            obj = self._draw(self.np_random)
            if obj.n != self.action_space.n:
                raise ValueError(
                    f"objective generator changed the number of points ({obj.n} != "
                    f"{self.action_space.n}); the action space is fixed per env."
                )
            self._set_objective(obj)
        self._channel_state = self.channel.new_episode(self._f, self.np_random)
        self._t = 0
        self._corruption_used = 0.0
        self._trace = [] if self.render_mode is not None else None
        return _OBS, {}

    def _check_action(self, action: Any) -> int:
        if type(action) is int and 0 <= action < self.action_space.n:  # the fast path
            return action
        return check_index(type(self).__name__, "action", action, int(self.action_space.n))

    def _corrupt(self, action: int, y: float) -> float:
        """``c_t(x_t)`` added to ``y_t`` (none here; :mod:`hbo_envs.envs.corrupted` overrides
        it and keeps ``self._corruption_used``)."""
        return 0.0

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        a = self._check_action(action)  # before any state change
        if self._t is None:
            raise RuntimeError("Call reset() before step().")
        if self._t >= self.horizon:
            raise RuntimeError(
                f"The episode is over (horizon={self.horizon} rounds played); call reset()."
            )
        fx = self._f_list[a]
        y = self.channel.sample(fx, a, self.np_random, self._channel_state)
        corruption = self._corrupt(a, y)  # c_t(x_t); 0 without an adversary
        y += corruption
        if not math.isfinite(y):  # pragma: no cover - channels guarantee finite draws
            raise FloatingPointError(f"non-finite reward {y!r} at action {a}")
        self._t += 1
        if self._trace is not None:  # only with a render_mode: (arm, y, regret, c used)
            self._trace.append((a, float(y), self._f_star - fx, self._corruption_used))
        info = {
            "f": fx,
            "regret": self._f_star - fx,
            "corruption": corruption,
            "corruption_used": self._corruption_used,
            "t": self._t,
        }
        return _OBS, float(y), False, self._t >= self.horizon, info

    # -- rendering ----------------------------------------------------------------------
    def attach_agent(self, agent: Any) -> None:
        """Show ``agent``'s posterior band (:meth:`~agents.protocol.Agent.posterior`) in the
        ``"rgb_array"`` picture; ``None`` detaches. The env never reads anything else from
        the agent, and rendering is the only use."""
        if agent is not None and not callable(getattr(agent, "posterior", None)):
            raise param_error(
                type(self).__name__, "agent", "an Agent with a posterior() method, or None", agent
            )
        self.agent = agent

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """Gymnasium's render for the ``render_mode`` chosen at construction.

        - ``"ansi"``: one line per played round, ``t  arm  x  reward  regret  corruption
          used`` (the last 20 rounds of the episode).
        - ``"rgb_array"``: an ``(H, W, 3)`` ``uint8`` picture (matplotlib Agg) of ``f`` over
          the candidate set with the played arms; 1-D: the curve, 2-D: a heat map, higher-D
          or data: ``f`` by arm sorted by value, beside the cumulative regret trace. When an
          agent is attached (:meth:`attach_agent`) its estimate ± width is drawn as a band.
        - ``None``: nothing (Gymnasium's convention).
        """
        from hbo_envs.envs.render import render_ansi, render_rgb

        if self.render_mode is None:
            gym.logger.warn(
                "You are calling render() without a render_mode; pass render_mode='ansi' or "
                "'rgb_array' to gym.make."
            )
            return None
        if self.render_mode == "ansi":
            return render_ansi(self)
        return render_rgb(self)
