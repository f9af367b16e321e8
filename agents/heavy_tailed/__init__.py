"""Agents for heavy-tailed payoffs: TGP-UCB (Chowdhury–Gopalan 2019, Alg. 1), CA-TGP-UCB and
MoM-GP-UCB (Park–Lee 2024, Algs. 1 and 2)."""

from agents.heavy_tailed.ca_tgp_ucb import CATGPUCB
from agents.heavy_tailed.mom_gp_ucb import MoMGPUCB
from agents.heavy_tailed.tgp_ucb import TGPUCB

__all__ = ["CATGPUCB", "MoMGPUCB", "TGPUCB"]
