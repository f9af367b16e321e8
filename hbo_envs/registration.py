"""Registration of every ``hbo/...`` environment (data, not code).

``ENV_SPECS`` is the single table of registered ids: entry point, kwargs and the paper
setting each one reproduces. Importing :mod:`hbo_envs` registers them all; registering
twice is harmless.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

__all__ = [
    "ENV_SPECS",
    "ENV_IDS",
    "EnvEntry",
    "default_horizon",
    "missing_data",
    "register_envs",
    "vector_entry_point",
]


@dataclass(frozen=True)
class EnvEntry:
    id: str
    entry_point: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    paper: str = ""
    data: str = ""  # the real data set the env reads (hbo_envs.data.DATASETS), "" if none


_CG = "hbo_envs.envs.chowdhury_gopalan"
_PL = "hbo_envs.envs.park_lee"
_BKC = "hbo_envs.envs.corrupted"
_RD = "hbo_envs.envs.real_data"

ENV_SPECS: tuple[EnvEntry, ...] = (
    EnvEntry(
        "hbo/RKHS-SE-StudentT-v0",
        f"{_CG}:ChowdhuryGopalanSyntheticEnv",
        {"kernel": "se", "noise": "student_t"},
        "Chowdhury–Gopalan 2019, Fig. 1a",
    ),
    EnvEntry(
        "hbo/RKHS-SE-Pareto-v0",
        f"{_CG}:ChowdhuryGopalanSyntheticEnv",
        {"kernel": "se", "noise": "pareto"},
        "Chowdhury–Gopalan 2019, Fig. 1b",
    ),
    EnvEntry(
        "hbo/RKHS-Matern-StudentT-v0",
        f"{_CG}:ChowdhuryGopalanSyntheticEnv",
        {"kernel": "matern", "noise": "student_t"},
        "Chowdhury–Gopalan 2019, Fig. 1c",
    ),
    EnvEntry(
        "hbo/RKHS-SE-Spike-v0", f"{_CG}:TruncationDemoEnv", {}, "Chowdhury–Gopalan 2019, Fig. 1f"
    ),
    EnvEntry(
        "hbo/RKHS-SE-SpikeFixedSign-v0",
        f"{_CG}:TruncationDemoEnv",
        {"sign": "per_episode"},
        "Chowdhury–Gopalan 2019, Fig. 1f (sign per episode)",
    ),
    *(
        EnvEntry(
            f"hbo/{name}-SymPareto-eps{tag}-v0",
            f"{_PL}:ParkLeeEnv",
            {"objective": obj, "epsilon": eps},
            f"Park–Lee 2024, Fig. 1{panel}",
        )
        for name, obj, panels in (
            ("RKHS1D", "rkhs1d", "ad"),
            ("Griewank2D", "griewank2d", "be"),
            ("Griewank5D", "griewank5d", "cf"),
        )
        for (tag, eps, panel) in (("02", 0.2, panels[0]), ("08", 0.8, panels[1]))
    ),
    EnvEntry(
        "hbo/Corrupted-Fig1-v0",
        f"{_BKC}:BogunovicFigure1Env",
        {},
        "Bogunovic–Krause–Scarlett 2020, Fig. 1",
    ),
    *(
        EnvEntry(
            f"hbo/Corrupted-SE-{tag}-v0",
            f"{_BKC}:CorruptedSEEnv",
            {"adversary": adv},
            f"Bogunovic–Krause–Scarlett 2020, §2 ({adv} adversary)",
        )
        for tag, adv in (
            ("None", "none"),
            ("Region", "region"),
            ("Adaptive", "adaptive"),
            ("Decoy", "decoy"),
            ("RandomSign", "random_sign"),
        )
    ),
    EnvEntry(
        "hbo/LowerBound-SE-v0",
        "hbo_envs.envs.lower_bound:LowerBoundEnv",
        {"kernel": "se"},
        "Chowdhury–Gopalan 2019, Thm. 2 (App. C)",
    ),
    EnvEntry(
        "hbo/LowerBound-Matern-v0",
        "hbo_envs.envs.lower_bound:LowerBoundEnv",
        {"kernel": "matern"},
        "Chowdhury–Gopalan 2019, Thm. 2 (App. C)",
    ),
    EnvEntry(
        "hbo/Stocks29-v0",
        f"{_RD}:Stocks29Env",
        {},
        "Chowdhury–Gopalan 2019, Fig. 1d",
        "stocks29",
    ),
    EnvEntry(
        "hbo/LightSensor-v0",
        f"{_RD}:LightSensorEnv",
        {},
        "Chowdhury–Gopalan 2019, Fig. 1e",
        "lightsensor",
    ),
    EnvEntry(
        "hbo/StockPicking-v0",
        f"{_RD}:StockPickingEnv",
        {},
        "Park–Lee 2024, Table 2",
        "stockpicking",
    ),
    EnvEntry(
        "hbo/GPBandit-v0",
        "hbo_envs.envs.base:GPBanditEnv",
        {"objective": "random-rkhs", "channel": {"name": "student_t", "df": 3.0}, "horizon": 1000},
        "configurable",
    ),
)

ENV_IDS: tuple[str, ...] = tuple(e.id for e in ENV_SPECS)


def register_envs() -> None:
    """Register every id of :data:`ENV_SPECS` with Gymnasium (idempotent).

    One rule for every id (so ids appended to :data:`ENV_SPECS` need nothing more):

    - ``vector_entry_point``: the string :func:`vector_entry_point` gives the id,
      ``"hbo_envs.envs.vector:<id's name>"`` (e.g. ``"hbo_envs.envs.vector:GPBandit_v0"``):
      a ``"module:function"`` string as Gymnasium's own ids register, so the spec
      serialises (``EnvSpec.to_json``) and compares equal to its copies. The function is
      :class:`hbo_envs.envs.vector.VectorCreator` of the id, so ``gym.make_vec(id,
      num_envs=k, vectorization_mode="vector_entry_point")`` builds the native vector env.
    - ``max_episode_steps`` is left ``None`` in the registry on purpose: the episode length
      is the env's ``horizon`` and ``gym.make(id).spec.max_episode_steps`` states it (see
      :attr:`hbo_envs.envs.GPBanditEnv.spec`). A registered TimeLimit would cut
      ``gym.make(id, horizon=k)`` at the default horizon whenever ``k`` is larger;
      ``gym.make(id, max_episode_steps=k)`` sets the horizon to ``k`` instead.
    """
    names = [vector_attribute(e.id) for e in ENV_SPECS]
    if len(set(names)) != len(names):  # pragma: no cover - caught by the first import
        raise RuntimeError(f"two registered ids share a vector creator name: {sorted(names)}")
    for e in ENV_SPECS:
        if e.id not in gym.registry:
            gym.register(
                id=e.id,
                entry_point=e.entry_point,
                kwargs=dict(e.kwargs),
                vector_entry_point=vector_entry_point(e.id),
            )


_VECTOR_MODULE = "hbo_envs.envs.vector"


def vector_attribute(env_id: str) -> str:
    """The name of ``env_id``'s vector creator in :mod:`hbo_envs.envs.vector`: the id without
    the ``hbo/`` namespace, every character other than a letter or digit made ``_``.

    >>> vector_attribute("hbo/HS-Forrester-AggSub-v0")
    'HS_Forrester_AggSub_v0'
    """
    return re.sub(r"\W", "_", env_id.removeprefix("hbo/"))


def vector_entry_point(env_id: str) -> str:
    """The ``vector_entry_point`` string registered for ``env_id``.

    >>> vector_entry_point("hbo/GPBandit-v0")
    'hbo_envs.envs.vector:GPBandit_v0'
    """
    return f"{_VECTOR_MODULE}:{vector_attribute(env_id)}"


def entry_of_vector_attribute(name: str) -> EnvEntry | None:
    """The :class:`EnvEntry` whose :func:`vector_attribute` is ``name``, else None."""
    return next((e for e in ENV_SPECS if vector_attribute(e.id) == name), None)


def default_horizon(env_id: str) -> int:
    """The episode length ``gym.make(env_id)`` has: the registered ``horizon`` keyword, or
    the default of the entry point's ``horizon`` parameter (one rule for every id).

    >>> default_horizon("hbo/RKHS-SE-StudentT-v0"), default_horizon("hbo/GPBandit-v0")
    (20000, 1000)
    """
    register_envs()
    if env_id not in gym.registry:
        raise ValueError(
            f"The 'env_id' parameter must be a registered id (hbo_envs.ENV_IDS). "
            f"Got {env_id!r} instead."
        )
    spec = gym.spec(env_id)
    if "horizon" in spec.kwargs:
        return int(spec.kwargs["horizon"])
    ep = spec.entry_point
    if isinstance(ep, str):
        module, _, attr = ep.partition(":")
        ep = getattr(importlib.import_module(module), attr)
    return int(inspect.signature(ep).parameters["horizon"].default)


def missing_data(env_id: str) -> str | None:
    """The name of the real data set ``env_id`` needs and the data directory lacks, else None."""
    entry = next((e for e in ENV_SPECS if e.id == env_id), None)
    if entry is None or not entry.data:
        return None
    from hbo_envs.data import missing_files

    return entry.data if missing_files(entry.data) else None


def env_table_markdown() -> str:
    """The README's environment table, built by constructing every registered env.

    ``B`` of envs that redraw ``f`` per reset is shown for the objective drawn at
    construction (``objective_seed=0``); ``alpha``, ``v``, ``nu`` are exact for every draw.
    A real-data env whose data set is not in the data directory gets a "needs data" row.
    """
    register_envs()
    head = (
        "| id | paper | objective | channel | n | α | v | ν | B | horizon | f per reset |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for e in ENV_SPECS:
        if missing_data(e.id):
            cells = [f"`{e.id}`", e.paper, f"needs data: `hbo-bench data fetch {e.data}`"]
            rows.append("| " + " | ".join(cells + ["–"] * 8) + " |")
            continue
        env = gym.make(e.id).unwrapped
        p = env.problem
        ch = env.channel.params()
        ch_name = ch.pop("name")
        args = (f"{k}={v:g}" if isinstance(v, float | int) else f"{k}={v}" for k, v in ch.items())
        ch_desc = ch_name + "(" + ", ".join(args) + ")"
        rows.append(
            f"| `{e.id}` | {e.paper} | {env.objective.name} | {ch_desc} | {p.n} | {p.alpha:g} "
            f"| {p.v:.4g} | {p.nu:.4g} | {p.B:.4g} | {p.horizon} "
            f"| {'redrawn' if env.redraw else 'fixed'} |"
        )
    return head + "\n".join(rows) + "\n"


# --- issue 19 "Beyond the seed papers": Han & Scarlett (ICML 2022) attacks and the
# frequency-bounded adversary of Ezzerg, Bogunovic & Knoblauch (2025). One appended block.
_ROB = "hbo_envs.envs.robust"
_HS_NAMES = {
    "forrester": "Forrester",
    "branin": "Branin",
    "camelback": "Camelback",
    "bohachevsky": "Bohachevsky",
    "levy": "Levy",
    "hartmann6": "Hartmann6",
}
_HS_TAGS = {
    "none": "None",
    "clipping": "Clipping",
    "aggressive_subtraction": "AggSub",
    "subtraction_rnd": "SubRnd",
    "subtraction_sq": "SubSq",
    "random": "Random",
}
ENV_SPECS = ENV_SPECS + (
    *(
        EnvEntry(
            f"hbo/HS-{_HS_NAMES[fn]}-{_HS_TAGS[att]}-v0",
            f"{_ROB}:HanScarlettEnv",
            {"function": fn, "attack": att},
            f"Han–Scarlett 2022, {att} attack (note §2, §4)",
        )
        for fn in _HS_NAMES
        for att in (
            ("none", "clipping", "aggressive_subtraction", "subtraction_rnd", "subtraction_sq")
            + ("random",)
            if fn == "forrester"
            else ("none", "clipping")
        )
    ),
    EnvEntry(
        "hbo/RCGP-Forrester-Frequency-v0",
        f"{_ROB}:RCGPForresterEnv",
        {"magnitude": "huge"},
        "Ezzerg–Bogunovic–Knoblauch 2025, Forrester (±1e12, T_c = ⌈T^{1/3}⌉)",
    ),
    EnvEntry(
        "hbo/RCGP-Forrester-FrequencyPaper-v0",
        f"{_ROB}:RCGPForresterEnv",
        {"magnitude": "paper"},
        "Ezzerg–Bogunovic–Knoblauch 2025, Forrester (App. I.4.2 HIGH 25 / LOW −10)",
    ),
    EnvEntry(
        "hbo/Frequency-SE-v0",
        f"{_ROB}:FrequencyCorruptedEnv",
        {"objective": "chowdhury-gopalan", "T_c": 10, "horizon": 500},
        "Ezzerg–Bogunovic–Knoblauch 2025, Def. 2.1 on the CG SE objective",
    ),
)


# --- issue 35 item 4: ``tails-v0``, envs where the heavy tail itself breaks GP-UCB. Each is
# ``hbo/GPBandit-v0`` with a random RKHS objective redrawn per seed, a heavy-tailed channel and
# a horizon, admitted by :func:`hbo_envs.judging.rules.tails.tail_breaks` (tuned GP-UCB's R_T
# at least 2x its R_T under Gaussian noise of the same interquartile range, 95% CIs apart, on
# the mean and on the IQM) on the held-out screening seeds 100..147
# (benchmarks/tails_env_selection.py, benchmarks/data/tails-v0-selection.json) and re-checked
# from the archive experiment ``tails-v0`` on seeds 0..47 (tests/test_tails_suite.py). Each
# env has a registered control ``...-Gaussian-v0``: the same objective draws, Gaussian noise
# of the same interquartile range (``sigma`` = :func:`hbo_envs.channels.quantiles.
# gaussian_twin`'s, tested to equal it exactly), the criterion's denominator.
_GPB = "hbo_envs.envs.base:GPBanditEnv"


def _rkhs(kernel: str, lengthscale: float, dim: int) -> dict[str, Any]:
    k: dict[str, Any] = {"name": kernel, "lengthscale": lengthscale}
    if kernel == "matern":
        k["nu"] = 1.5
    return {"name": "random-rkhs", "kernel": k, "dim": dim, "n_points": 100 * dim}


def _contaminated(outlier: str) -> dict[str, Any]:
    return {
        "name": "contaminated",
        "sigma": 0.1,
        "prob": 0.1,
        "outlier": outlier,
        "outlier_shape": 1.3,
        "outlier_scale": 1.0,
        "alpha": 0.2,
    }


def _student_t(df: float, alpha: float) -> dict[str, Any]:
    return {"name": "student_t", "df": df, "scale": 0.2, "alpha": alpha}


#: (name, screening candidate, objective, heavy channel, horizon, twin's Gaussian sigma)
TAILS_ENVS: tuple[tuple[str, str, dict[str, Any], dict[str, Any], int, float], ...] = (
    (
        "SE1D-StudentT",
        "se1d-t13-T5k",
        _rkhs("se", 0.2, 1),
        _student_t(1.3, 0.2),
        5000,
        0.269690540996598,
    ),
    (
        "SE1D-Contaminated",
        "se1d-contam-T5k",
        _rkhs("se", 0.2, 1),
        _contaminated("signed_pareto"),
        5000,
        0.11337602588683893,
    ),
    (
        "Matern1D-Contaminated",
        "matern1d-contam-T5k",
        _rkhs("matern", 0.3, 1),
        _contaminated("signed_pareto"),
        5000,
        0.11337602588683893,
    ),
    (
        "Matern1D-ContaminatedT",
        "matern1d-contam-t-T10k",
        _rkhs("matern", 0.3, 1),
        _contaminated("student_t"),
        10000,
        0.11199021595553467,
    ),
    (
        "SE2D-StudentT",
        "se2d-t15-T5k",
        _rkhs("se", 0.3, 2),
        _student_t(1.5, 0.3),
        5000,
        0.2587421565080562,
    ),
    (
        "SE2D-Contaminated",
        "se2d-contam-T5k",
        _rkhs("se", 0.3, 2),
        _contaminated("signed_pareto"),
        5000,
        0.11337602588683893,
    ),
    (
        "Matern2D-StudentT",
        "matern2d-t12-T2k",
        _rkhs("matern", 0.4, 2),
        _student_t(1.2, 0.1),
        2000,
        0.2768273787557867,
    ),
    (
        "Matern2D-Contaminated",
        "matern2d-contam-p-T5k",
        _rkhs("matern", 0.4, 2),
        _contaminated("signed_pareto"),
        5000,
        0.11337602588683893,
    ),
    (
        "Matern2D-ContaminatedT",
        "matern2d-contam-T2k",
        _rkhs("matern", 0.4, 2),
        _contaminated("student_t"),
        2000,
        0.11199021595553467,
    ),
    (
        "SE3D-ContaminatedT",
        "se3d-contam-t-T4k",
        _rkhs("se", 0.4, 3),
        _contaminated("student_t"),
        4000,
        0.11199021595553467,
    ),
)


#: The envs of the ``tails-v0`` suite: those of :data:`TAILS_ENVS` whose criterion the archive
#: experiment ``tails-v0`` confirmed on its fresh seeds 0..47 on both forms (the two-stage
#: rule: screened on seeds 100..147, confirmed on 0..47). ``SE1D-Contaminated`` and
#: ``Matern1D-ContaminatedT`` passed the IQM form there but not the mean form (the mean's CI
#: under the Gaussian control is wide: a few seeds stick on a wrong peak), so they stay
#: registered, with their controls, outside the suite; tests/test_tails_suite.py re-checks
#: both lists from the archive.
TAILS_V0: tuple[str, ...] = (
    "SE1D-StudentT",
    "Matern1D-Contaminated",
    "SE2D-StudentT",
    "SE2D-Contaminated",
    "Matern2D-StudentT",
    "Matern2D-Contaminated",
    "Matern2D-ContaminatedT",
    "SE3D-ContaminatedT",
)


def tails_id(name: str, twin: bool = False) -> str:
    """The registered id of ``tails-v0`` env ``name`` (``twin``: its Gaussian control).

    >>> tails_id("SE1D-StudentT"), tails_id("SE1D-StudentT", twin=True)
    ('hbo/Tails-SE1D-StudentT-v0', 'hbo/Tails-SE1D-StudentT-Gaussian-v0')
    """
    return f"hbo/Tails-{name}{'-Gaussian' if twin else ''}-v0"


ENV_SPECS = ENV_SPECS + tuple(
    EnvEntry(
        tails_id(name, twin),
        _GPB,
        {
            "objective": obj,
            "channel": ({"name": "gaussian", "sigma": sigma, "alpha": ch["alpha"]} if twin else ch),
            "horizon": T,
            "redraw": True,
        },
        "tails-v0 (issue 35): Gaussian control of the same IQR" if twin else "tails-v0 (issue 35)",
    )
    for name, _, obj, ch, T, sigma in TAILS_ENVS
    for twin in (False, True)
)
ENV_IDS = tuple(e.id for e in ENV_SPECS)
