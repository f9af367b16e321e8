"""The registry of reference agents: one entry per name (data, not code).

``make(name, **params)`` builds an agent by name, ``available()`` lists the names. A new
algorithm adds one :class:`AgentEntry` to :data:`AGENT_SPECS` (or calls :func:`register`
for a third-party class):

>>> import agents
>>> agents.available()  # doctest: +NORMALIZE_WHITESPACE
('gp-ucb', 'tgp-ucb', 'ata-gp-ucb-qff', 'ata-gp-ucb-nystrom', 'ca-tgp-ucb', 'mom-gp-ucb',
 'gp-ucb-corruption', 'fast-slow-gp-ucb', 'fast-slow-gp-ucb-unknown', 'random',
 'rcgp-ucb', 'rcgp-ucb-adaptive', 'ec-gp-ucb', 'outlier-gp-ucb', 'robust-ucb-trunc',
 'robust-ucb-mom')
>>> agents.make("tgp-ucb", b=lambda t: t ** 0.25).name
'tgp-ucb'
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from agents.configs import config_params
from hbo_envs.validation import param_error

__all__ = ["AGENT_SPECS", "AgentEntry", "available", "make", "register", "resolve"]


@dataclass(frozen=True)
class AgentEntry:
    """``name`` -> ``entry_point`` (``"module:Class"``) and the paper it implements."""

    name: str
    entry_point: str
    paper: str = ""


AGENT_SPECS: tuple[AgentEntry, ...] = (
    AgentEntry(
        "gp-ucb",
        "agents.gp.gp_ucb:GPUCB",
        "Srinivas et al. 2010; IGP-UCB beta of Chowdhury–Gopalan 2017",
    ),
    AgentEntry(
        "tgp-ucb",
        "agents.heavy_tailed.tgp_ucb:TGPUCB",
        "Chowdhury–Gopalan 2019, Algorithm 1",
    ),
    AgentEntry(
        "ata-gp-ucb-qff",
        "agents.heavy_tailed.ata_gp_ucb:ATAGPUCBQFF",
        "Chowdhury–Gopalan 2019, Algorithm 2 with QFF (eq. (1))",
    ),
    AgentEntry(
        "ata-gp-ucb-nystrom",
        "agents.heavy_tailed.ata_gp_ucb:ATAGPUCBNystrom",
        "Chowdhury–Gopalan 2019, Algorithm 2 with NyströmEmbedding (Algorithm 3)",
    ),
    AgentEntry(
        "ca-tgp-ucb",
        "agents.heavy_tailed.ca_tgp_ucb:CATGPUCB",
        "Park–Lee 2024, Algorithm 1",
    ),
    AgentEntry(
        "mom-gp-ucb",
        "agents.heavy_tailed.mom_gp_ucb:MoMGPUCB",
        "Park–Lee 2024, Algorithm 2",
    ),
    AgentEntry(
        "gp-ucb-corruption",
        "agents.corruption.gp_ucb_corruption:GPUCBCorruption",
        "Bogunovic–Krause–Scarlett 2020, Algorithm 1 (known C)",
    ),
    AgentEntry(
        "fast-slow-gp-ucb",
        "agents.corruption.fast_slow:FastSlowGPUCB",
        "Bogunovic–Krause–Scarlett 2020, Algorithm 2 (known-or-zero C)",
    ),
    AgentEntry(
        "fast-slow-gp-ucb-unknown",
        "agents.corruption.fast_slow_unknown:FastSlowGPUCBUnknown",
        "Bogunovic–Krause–Scarlett 2020, Algorithm 3 (unknown C)",
    ),
    AgentEntry(
        "random",
        "agents.baselines.uniform:RandomAgent",
        "uniform play: the floor every table and plot shows",
    ),
    # issue 19: robust agents beyond the seed papers (agents/robust, docs/robust.md)
    AgentEntry(
        "rcgp-ucb",
        "agents.robust.rcgp_ucb:RCGPUCB",
        "Ezzerg–Bogunovic–Knoblauch 2025, Algorithm 1 (FC-RCGP-UCB; note §2–§4)",
    ),
    AgentEntry(
        "rcgp-ucb-adaptive",
        "agents.robust.rcgp_ucb:RCGPUCBAdaptive",
        "Ezzerg–Bogunovic–Knoblauch 2025, Algorithm 2 (A2-RCGP-UCB, lagged anchor; note §4)",
    ),
    AgentEntry(
        "ec-gp-ucb",
        "agents.robust.ec_gp_ucb:ECGPUCB",
        "Bogunovic–Krause 2021, EC-GP-UCB (width ε√t/√λ: recollection, unverified; note §2)",
    ),
    AgentEntry(
        "outlier-gp-ucb",
        "agents.robust.outlier_gp_ucb:OutlierGPUCB",
        "after Martinez-Cantin–Tee–McCourt 2018 (Student-t diagnostic; re-implementation's "
        "defaults, note §2)",
    ),
    # issue 35: the kernel-free floor under heavy tails (per-arm, docs/agents.md)
    AgentEntry(
        "robust-ucb-trunc",
        "agents.baselines.robust_ucb:RobustUCBTruncated",
        "Bubeck–Cesa-Bianchi–Lugosi 2013, Robust UCB with the truncated mean (Lemma 1)",
    ),
    AgentEntry(
        "robust-ucb-mom",
        "agents.baselines.robust_ucb:RobustUCBMedianOfMeans",
        "Bubeck–Cesa-Bianchi–Lugosi 2013, Robust UCB with median of means (Lemma 2)",
    ),
)

_REGISTRY: dict[str, AgentEntry] = {e.name: e for e in AGENT_SPECS}


def register(name: str, entry_point: str, paper: str = "") -> None:
    """Register ``entry_point`` (``"module:Class"``) under ``name`` (must be new)."""
    if name in _REGISTRY:
        raise ValueError(f"An agent named {name!r} is already registered.")
    if ":" not in entry_point:
        raise param_error("register", "entry_point", "of the form 'module:Class'", entry_point)
    _REGISTRY[name] = AgentEntry(name, entry_point, paper)


def available() -> tuple[str, ...]:
    """Names of every registered agent, in registration order."""
    return tuple(_REGISTRY)


def resolve(name: str) -> type:
    """The class registered under ``name``."""
    if name not in _REGISTRY:
        raise param_error(
            "agents.make", "name", "one of " + ", ".join(repr(n) for n in _REGISTRY), name
        )
    module, _, attr = _REGISTRY[name].entry_point.partition(":")
    return getattr(importlib.import_module(module), attr)


def make(name: str, config: str = "paper", **params: Any) -> Any:
    """Build the agent registered under ``name`` with hyperparameters ``params``.

    ``config`` is ``"paper"`` (the published configuration: the defaults) or ``"tuned"``
    (the stored choice of the tuning protocol, :mod:`agents.configs`); ``params`` given
    here override the configuration's. Parameters are only stored here; they are
    validated when the agent is reset on a problem (an unknown keyword fails immediately
    with ``TypeError``).
    """
    cls = resolve(name)
    return cls(**{**config_params(name, config), **params})
