"""Core of the experiment registry: :class:`Experiment` and :class:`ExponentExperiment`,
schedules passed as agent parameters, and :func:`register` (see
:mod:`hbo_envs.judging.experiments`). The claims and the exponent's :class:`EnvVariant`
come from the rules below (:mod:`hbo_envs.judging.rules`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from agents.configs import config_params, tuned_agents
from hbo_envs.harness.specs import AgentSpec
from hbo_envs.judging.rules.claims import SUITE, Claim, Less
from hbo_envs.judging.rules.exponent import EnvVariant

__all__ = [
    "EXPERIMENTS",
    "EnvVariant",
    "Exclusion",
    "Experiment",
    "ExponentExperiment",
    "LogT",
    "PowerT",
    "available_agent_names",
    "register",
    "tuned",
    "tuned_label",
]


# -- schedules that experiment definitions pass as agent parameters ---------------------------
class LogT:
    """The schedule ``t -> ln t`` (for ``t < e`` it is ``ln t`` clipped at 0); picklable."""

    label = "ln t"

    def __call__(self, t: float, *args: Any, **kwargs: Any) -> float:
        return max(math.log(max(float(t), 1.0)), 0.0)

    def __repr__(self) -> str:
        return "LogT()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LogT)

    def __hash__(self) -> int:
        return hash("LogT")


class PowerT:
    """The schedule ``t -> t ** p`` (e.g. ``PowerT(0.25)``, label ``t^1/4``); picklable."""

    _NAMES = {0.25: "1/4", 0.5: "1/2", 1 / 3: "1/3"}

    def __init__(self, p: float) -> None:
        self.p = float(p)
        self.label = f"t^{self._NAMES.get(self.p, repr(self.p))}"

    def __call__(self, t: float, *args: Any, **kwargs: Any) -> float:
        return float(max(float(t), 1.0) ** self.p)

    def __repr__(self) -> str:
        return f"PowerT({self.p!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerT) and other.p == self.p

    def __hash__(self) -> int:
        return hash(("PowerT", self.p))


@dataclass(frozen=True)
class Exclusion:
    """Agent ``agent`` (a label) is not run on ``env``, for ``reason`` (printed by
    ``reproduce`` and stored in ``summary.json``, instead of a failing cell)."""

    agent: str
    env: str
    reason: str

    def __str__(self) -> str:
        return f"{self.agent} on {self.env}: {self.reason}"


@dataclass(frozen=True)
class Experiment:
    """One paper experiment (see the module docstring).

    ``quick_note`` states the quick configuration's horizons and why they are enough for
    every listed algorithm to do something (``reproduce --quick`` prints it);
    ``exclude`` lists (agent, env) pairs not run, each with its reason;
    ``smoke_horizon`` is the T of ``reproduce --smoke`` (1 seed: proves that every agent,
    env, summary and plot of the experiment still runs, says nothing about the paper).
    """

    name: str
    title: str
    citation: str
    protocol: str
    envs: tuple[str, ...]
    paper: tuple[AgentSpec, ...]
    seeds: int
    horizon: int | None
    quick_seeds: int
    quick_horizon: int
    extra: tuple[AgentSpec, ...] = ()
    metric: str = "avg_regret"  # what the paper's figure plots: "regret" or "avg_regret"
    kind: str = "regret"  # "regret" | "confidence" | "runtime" | "corruption" | "exponent"
    expect: str = ""
    snapshot: bool = False
    quick_horizon_by_env: dict[str, int] = field(default_factory=dict)
    claims: tuple[Claim, ...] = ()
    floor: bool = True  # run the uniform-random agent as the floor (label "random")
    quick_note: str = ""
    exclude: tuple[Exclusion, ...] = ()
    smoke_horizon: int = 60  # ``reproduce --smoke``: 1 seed at this T (CI runs every name so)
    #: env id -> keyword arguments of ``gym.make`` (a configurable env such as
    #: ``hbo/GPBandit-v0`` with its objective and channel); every other env: none
    env_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: run every agent listed by name alone (its paper configuration) in its tuned
    #: configuration too, labelled ``name[config=tuned]`` (issue 35 item 6: every results
    #: table shows the paper and the tuned row of each agent); an exclusion of the paper
    #: label excludes the tuned one
    tuned_rows: bool = True

    def __post_init__(self) -> None:
        # the tuned rows get the floor checks of their paper rows (a suite check each:
        # "X[config=tuned] below random"), so no row of a table goes unjudged
        if not self.tuned_rows:
            return
        have = {c.text for c in self.claims}
        extra = []
        for c in self.claims:
            if isinstance(c, Less) and c.b == "random" and c.a in tuned_agents():
                t = replace(
                    c,
                    text=c.text.replace(c.a, tuned_label(c.a), 1),
                    a=tuned_label(c.a),
                    family=SUITE,
                )
                if t.text not in have:
                    extra.append(t)
        object.__setattr__(self, "claims", tuple(self.claims) + tuple(extra))

    @property
    def batches(self) -> bool:
        """Whether the seeds may run as vectorized batches: not when a claim compares the
        agents' running times (``metric="agent_time"``, ``kind="runtime"``), since a
        batched run's time is its share of the batch's and only some agents batch."""
        timed = any(getattr(c, "metric", None) == "agent_time" for c in self.claims)
        return self.kind != "runtime" and not timed

    def agent_specs(
        self, *, paper_only: bool = False, available: set[str] | None = None
    ) -> tuple[list[AgentSpec], list[str]]:
        """``(runnable agent specs, labels skipped because the agent is not available)``.

        The uniform-random floor (``random``) is always run, ``paper_only`` or not, unless
        the experiment sets ``floor=False``.
        """
        names = available_agent_names() if available is None else available
        specs, skipped = [], []
        listed = self.paper + (() if paper_only else self.extra)
        if self.tuned_rows and not paper_only:
            have = {a.label for a in listed}
            listed += tuple(
                tuned(a.source)
                for a in listed
                if a.kind == "name"
                and not a.params
                and a.label == a.source
                and a.source in tuned_agents()
                and tuned_label(a.source) not in have
            )
        if self.floor and all(a.label != "random" for a in listed):
            listed += (_a("random"),)
        for a in listed:
            if a.kind == "name" and a.source not in names:
                skipped.append(a.label)
            else:
                specs.append(a)
        return specs, skipped

    def specs_for(self, env_id: str, specs: list[AgentSpec]) -> list[AgentSpec]:
        """``specs`` without the agents :attr:`exclude` lists for ``env_id``."""
        out = {(a, x.env) for x in self._all_exclusions() for a in (x.agent,)}
        return [s for s in specs if (s.label, env_id) not in out]

    def _all_exclusions(self) -> tuple[Exclusion, ...]:
        """:attr:`exclude`, and each exclusion of a paper label again for its tuned row."""
        if not self.tuned_rows:
            return self.exclude
        have = {x.agent for x in self.exclude}
        extra = tuple(
            Exclusion(tuned_label(x.agent), x.env, x.reason)
            for x in self.exclude
            if tuned_label(x.agent) not in have and x.agent in tuned_agents()
        )
        return self.exclude + extra

    def exclusions(self, specs: list[AgentSpec]) -> list[Exclusion]:
        """The exclusions that concern an agent of ``specs`` (what ``reproduce`` prints)."""
        labels = {s.label for s in specs}
        return [x for x in self._all_exclusions() if x.agent in labels and x.env in self.envs]

    def kwargs_for(self, env_id: str) -> dict[str, Any]:
        """The ``gym.make`` keyword arguments of ``env_id`` in this experiment (a copy)."""
        return dict(self.env_kwargs.get(env_id, {}))

    def horizon_for(self, env_id: str, quick: bool, smoke: bool = False) -> int | None:
        if smoke:
            return self.smoke_horizon
        if quick:
            return self.quick_horizon_by_env.get(env_id, self.quick_horizon)
        return self.horizon


def available_agent_names() -> set[str]:
    """Names the installed ``agents`` package can build (empty until it has a registry)."""
    try:
        import agents

        return set(agents.available())
    except (ImportError, AttributeError):
        return set()


def _a(name: str, label: str | None = None, **params: Any) -> AgentSpec:
    return AgentSpec(name, params, label)


def tuned_label(name: str) -> str:
    """``name[config=tuned]``: the label of an agent's tuned configuration (issue 35 item 1)."""
    return f"{name}[config=tuned]"


def tuned(name: str) -> AgentSpec:
    """Agent ``name`` in its tuned configuration (``agents/configs/tuned/NAME.json``), its
    parameters resolved into the spec so that a re-tuned configuration is a new cell (the
    cell fingerprint holds the parameters, not the file)."""
    return _a(name, tuned_label(name), config="tuned", **config_params(name, "tuned"))


EXPERIMENTS: dict[str, Experiment] = {}


def register(e: Experiment) -> None:
    if e.name in EXPERIMENTS:
        raise ValueError(f"duplicate experiment name {e.name!r}")
    EXPERIMENTS[e.name] = e


@dataclass(frozen=True)
class ExponentExperiment(Experiment):
    """An :class:`~hbo_envs.judging.experiments.Experiment` measured over a ladder of ``T``.

    ``variants`` are the envs (with kwargs) it runs, ``horizons`` / ``quick_horizons`` the
    ladders of ``T``; ``horizon`` / ``quick_horizon`` must be their largest entries. Claims
    are judged on the table of final rows (``env_id`` = variant label, ``t = T``).
    """

    kind: str = "exponent"
    #: the ladder's claims are about the published algorithms' growth; no tuned rows
    tuned_rows: bool = False
    variants: tuple[EnvVariant, ...] = ()
    horizons: tuple[int, ...] = ()
    quick_horizons: tuple[int, ...] = ()
    smoke_horizons: tuple[int, ...] = (50, 100, 200)  # ``reproduce --smoke`` (1 seed)

    def __post_init__(self) -> None:
        for name, ladder, top in (
            ("horizons", self.horizons, self.horizon),
            ("quick_horizons", self.quick_horizons, self.quick_horizon),
        ):
            if len(ladder) < 3 or list(ladder) != sorted(set(ladder)) or ladder[-1] != top:
                raise ValueError(
                    f"ExponentExperiment {self.name!r}: {name} must be at least 3 increasing "
                    f"horizons ending at {top}; got {ladder!r}."
                )
        if not self.variants:
            raise ValueError(f"ExponentExperiment {self.name!r} lists no variants.")
