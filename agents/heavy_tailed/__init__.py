"""Agents for heavy-tailed payoffs: TGP-UCB and ATA-GP-UCB with QFF or Nyström embeddings
(Chowdhury–Gopalan 2019, Algs. 1 and 2), CA-TGP-UCB and MoM-GP-UCB (Park–Lee 2024, Algs. 1
and 2)."""

from agents.heavy_tailed.ata_gp_ucb import ATAGPUCBQFF, ATAGPUCBNystrom
from agents.heavy_tailed.ca_tgp_ucb import CATGPUCB
from agents.heavy_tailed.mom_gp_ucb import MoMGPUCB
from agents.heavy_tailed.tgp_ucb import TGPUCB

__all__ = ["ATAGPUCBNystrom", "ATAGPUCBQFF", "CATGPUCB", "MoMGPUCB", "TGPUCB"]
