"""
The privacy report
==================

:meth:`privacy_report` states what a fit released and what it cost: the guarantee, the
neighbour relation, how the releases compose, every kind of release, the public inputs,
and anything that had to be read from the data. It is a dict that serialises to JSON
and prints as plain text for an auditor.
"""

import json
import warnings

from dptrees import DPGradientBoostingRegressor
from dptrees.datasets import load_california_housing

X, y, names, bounds, y_bounds = load_california_housing()

model = DPGradientBoostingRegressor(epsilon=1.0, delta=1e-6, n_estimators=50,
                                    bounds=bounds, y_bounds=y_bounds, random_state=0)
model.fit(X, y)
report = model.privacy_report()
print(report)

# %%
# As JSON, to store next to the model; here its first kind of release:
text = report.to_json(indent=1)
print(f"{len(text)} characters of JSON with the keys {sorted(json.loads(text))}")
print(json.dumps(report["ledger"][0], indent=1))

# %%
# Leave out the public bounds and the fit reads them from the data: it warns with a
# ``PrivacyLeakWarning``, and the report says the result is not private.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    leaky = DPGradientBoostingRegressor(epsilon=1.0, n_estimators=50, random_state=0)
    leaky.fit(X, y)
for warning in caught:
    print(f"{warning.category.__name__}: {warning.message}")
print()
print(leaky.privacy_report())
