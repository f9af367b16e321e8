"""Robust agents of 2018–2025 beyond the seed papers (issue 19; ``docs/robust.md``).

- :class:`RCGPUCB`, :class:`RCGPUCBAdaptive` — RCGP-UCB, stable (fixed centre) and
  adaptive (lagged centre), Ezzerg, Bogunovic & Knoblauch (2025);
- :class:`ECGPUCB` — EC-GP-UCB, Bogunovic & Krause (2021) (width: recollection, unverified);
- :class:`OutlierGPUCB` — GP-UCB on the inliers of a Student-t diagnostic, after
  Martinez-Cantin, Tee & McCourt (2018) (defaults of a third-party re-implementation).

RGP-PE (Bogunovic, Li, Krause & Scarlett 2022) is not shipped: its note verifies only the
abstract, and every algorithmic detail (epoch schedule, design stopping rule, corruption
term of the width) is recollection or an hbo-bench design choice (see ``docs/robust.md``).
"""

from agents.robust.ec_gp_ucb import ECGPUCB
from agents.robust.outlier_gp_ucb import OutlierGPUCB
from agents.robust.rcgp_ucb import RCGPUCB, RCGPUCBAdaptive

__all__ = ["ECGPUCB", "OutlierGPUCB", "RCGPUCB", "RCGPUCBAdaptive"]
