"""Datasets shipped with dptrees, with their public bounds.

Only what the demo and the quick tests need is bundled; the benchmark scripts read the
full collection from ``../shared/data`` next to a source checkout.
"""

import gzip
from importlib import resources

import numpy as np

__all__ = ["load_california_housing", "CALIFORNIA_HOUSING_BOUNDS"]

#: Public bounds for California Housing (Pace & Barry 1997), one (lower, upper) per column.
#: Longitude and latitude: California's extent. Median age, median income and median
#: house value are top-coded by the 1990 census at 52, 15.0001 and 500,001. The four count
#: columns (rooms, bedrooms, population, households of a block group) have no published
#: cap; the bounds are round numbers above the largest block group of the census. They are
#: stated here, not read from the data, so models fitted with them stay DP.
CALIFORNIA_HOUSING_BOUNDS = {
    "longitude": (-124.5, -114.0),
    "latitude": (32.5, 42.0),
    "housingMedianAge": (0.0, 52.0),
    "totalRooms": (0.0, 40000.0),
    "totalBedrooms": (0.0, 6500.0),
    "population": (0.0, 36000.0),
    "households": (0.0, 6500.0),
    "medianIncome": (0.0, 15.0001),
    "medianHouseValue": (0.0, 500001.0),
}


def load_california_housing():
    """Load the bundled California Housing data (20,640 block groups, 8 features).

    Returns
    -------
    X : ndarray of shape (20640, 8), float64
        The eight features in file order.
    y : ndarray of shape (20640,), float64
        Median house value in dollars.
    feature_names : list of str
    bounds : tuple of (ndarray, ndarray)
        Public lower and upper bounds of the features, from
        :data:`CALIFORNIA_HOUSING_BOUNDS`.
    y_bounds : tuple of float
        Public bounds of the target.
    """
    path = resources.files(__name__).joinpath("data", "cal_housing.csv.gz")
    with path.open("rb") as raw, gzip.open(raw, "rt") as fh:
        header = fh.readline().strip().split(",")
        data = np.loadtxt(fh, delimiter=",", dtype=np.float64)
    names = header[:-1]
    lower = np.array([CALIFORNIA_HOUSING_BOUNDS[n][0] for n in names])
    upper = np.array([CALIFORNIA_HOUSING_BOUNDS[n][1] for n in names])
    return data[:, :-1].copy(), data[:, -1].copy(), names, (lower, upper), CALIFORNIA_HOUSING_BOUNDS[header[-1]]
