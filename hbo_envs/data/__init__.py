"""Real data for the real-data environments: data directory, loaders, statistics.

Data is read from the data directory (``$HBO_DATA_DIR``, default the per-user cache
directory; see :mod:`hbo_envs.data.paths` for the layout) and validated on load
(:mod:`hbo_envs.data.loaders`). Nothing here downloads: the ``data_scripts`` package
(``hbo-bench data fetch|import|list``) fills the data directory.

>>> from hbo_envs.data import DATASETS
>>> sorted(DATASETS)
['lightsensor', 'stockpicking', 'stocks29']
"""

from typing import TYPE_CHECKING

from hbo_envs._lazy import lazy_exports

if TYPE_CHECKING:  # the same names for type checkers and IDEs (the package is py.typed)
    from hbo_envs.data.loaders import (
        LightSensorData,
        clear_cache,
        load_lightsensor,
        load_stockpicking,
        load_stocks29,
    )
    from hbo_envs.data.paths import (
        DATASETS,
        DataFormatError,
        DataNotFoundError,
        Dataset,
        data_dir,
        dataset_path,
        missing_files,
        require,
    )
    from hbo_envs.data.stats import KSResult, ks_gaussian

# Imported on first use (PEP 562): the loaders need pandas and the statistics scipy.stats,
# which a process that only asks where the data lives (the harness's runner through
# ``require``, ``hbo-bench data list``, the CLI's argument parser) should not pay for.
_WHERE = {
    **dict.fromkeys(
        [
            "LightSensorData",
            "clear_cache",
            "load_lightsensor",
            "load_stockpicking",
            "load_stocks29",
        ],
        "hbo_envs.data.loaders",
    ),
    **dict.fromkeys(
        [
            "DATASETS",
            "DataFormatError",
            "DataNotFoundError",
            "Dataset",
            "data_dir",
            "dataset_path",
            "missing_files",
            "require",
        ],
        "hbo_envs.data.paths",
    ),
    **dict.fromkeys(["KSResult", "ks_gaussian"], "hbo_envs.data.stats"),
}
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

__all__ = [
    "DATASETS",
    "DataFormatError",
    "DataNotFoundError",
    "Dataset",
    "KSResult",
    "LightSensorData",
    "clear_cache",
    "data_dir",
    "dataset_path",
    "ks_gaussian",
    "load_lightsensor",
    "load_stockpicking",
    "load_stocks29",
    "missing_files",
    "require",
]
