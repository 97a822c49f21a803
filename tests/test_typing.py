"""The public API is typed: a ``py.typed`` marker ships with the package, and the
estimators' methods carry annotations that resolve (``typing.get_type_hints``)."""

import inspect
import typing
from importlib import resources

import pytest

import dptrees
from dptrees import federated, persistence

ESTIMATORS = [getattr(dptrees, name) for name in dptrees.__all__
              if name.startswith("DP") and inspect.isclass(getattr(dptrees, name))]
ESTIMATORS += [federated.DPFederatedGradientBoostingClassifier,
               federated.DPFederatedGradientBoostingRegressor]
METHODS = ("fit", "predict", "predict_proba", "decision_function", "staged_predict",
           "apply", "privacy_report")


def test_the_package_is_marked_typed():
    assert resources.files("dptrees").joinpath("py.typed").is_file()


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_estimator_methods_are_annotated(cls):
    checked = 0
    for name in METHODS:
        method = getattr(cls, name, None)
        if method is None:
            continue
        hints = typing.get_type_hints(method)
        params = [p for p in inspect.signature(method).parameters if p != "self"]
        assert "return" in hints, f"{cls.__name__}.{name} has no return annotation"
        assert set(params) <= set(hints), f"{cls.__name__}.{name}: {params} vs {hints}"
        checked += 1
    assert checked >= 3
    assert typing.get_type_hints(cls.fit)["return"] is typing.Self


def test_persistence_is_annotated():
    for func in (persistence.save, persistence.load, persistence.trusted_types):
        assert "return" in typing.get_type_hints(func)
