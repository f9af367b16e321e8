"""Finite-dimensional kernel embeddings used by ATA-GP-UCB (Chowdhury–Gopalan 2019 §5):
quadrature Fourier features (:mod:`agents.features.qff`) and Nyström embeddings with
ridge-leverage-score dictionaries (:mod:`agents.features.nystrom`)."""

from agents.features.nystrom import (
    nystrom_factors,
    nystrom_features,
    pinv_sqrt_psd,
    sample_copies_distinct,
    sample_copies_per_arm,
    sample_copies_per_observation,
)
from agents.features.qff import qff_error, qff_error_bound, qff_features, qff_nodes

__all__ = [
    "nystrom_factors",
    "nystrom_features",
    "pinv_sqrt_psd",
    "qff_error",
    "qff_error_bound",
    "qff_features",
    "qff_nodes",
    "sample_copies_distinct",
    "sample_copies_per_arm",
    "sample_copies_per_observation",
]
