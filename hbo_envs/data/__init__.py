"""Real data for the real-data environments: data directory, loaders, statistics.

Data is read from the data directory (``$HBO_DATA_DIR``, default the per-user cache
directory; see :mod:`hbo_envs.data.paths` for the layout) and validated on load
(:mod:`hbo_envs.data.loaders`). Nothing here downloads: the ``data_scripts`` package
(``hbo-bench data fetch|import|list``) fills the data directory.

>>> from hbo_envs.data import DATASETS
>>> sorted(DATASETS)
['lightsensor', 'stockpicking', 'stocks29']
"""

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
