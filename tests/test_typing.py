"""The public API is typed: a ``py.typed`` marker ships with the package, and the
estimators' methods carry annotations that resolve (``typing.get_type_hints``)."""

import importlib
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


# Modules whose whole public API is annotated: every function in ``__all__`` and every
# public method (and ``__init__``, property, classmethod, staticmethod) of a class in it.
FULLY_ANNOTATED_MODULES = (
    "dptrees.mechanisms",
    "dptrees.accounting",
    "dptrees.privacy.pld",
    "dptrees.privacy.budget",
    "dptrees.privacy.rdp",
    "dptrees.privacy.zcdp",
    "dptrees.audit",
    "dptrees.model_selection",
    "dptrees.preprocessing",
)


def _public_callables(module_name):
    """``(qualified name, function, is_init)`` for the public API of a module, found by
    walking its ``__all__`` (so that a function added later is checked too)."""
    module = importlib.import_module(module_name)
    found = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj):
            found.append((f"{module_name}.{name}", obj, False))
        elif inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(value, (classmethod, staticmethod)):
                    value = value.__func__
                elif isinstance(value, property):
                    value = value.fget
                if inspect.isfunction(value):
                    found.append((f"{module_name}.{name}.{attr}", value, attr == "__init__"))
    return found



def _all_public_callables():
    """The public callables of every module, each function once (PLDAccountant is in the
    ``__all__`` of both accounting modules)."""
    seen, found = set(), []
    for module_name in FULLY_ANNOTATED_MODULES:
        for item in _public_callables(module_name):
            if item[1] not in seen:
                seen.add(item[1])
                found.append(item)
    return found


PUBLIC_CALLABLES = _all_public_callables()


def test_the_annotated_modules_are_walked():
    names = {name for name, _, _ in PUBLIC_CALLABLES}
    assert len(PUBLIC_CALLABLES) >= 57
    for expected in ("dptrees.mechanisms.noisy_sum",
                     "dptrees.accounting.BudgetAccountant.spend",
                     "dptrees.accounting.BudgetAccountant.default",
                     "dptrees.accounting.RDPAccountant.__init__",
                     "dptrees.accounting.PLDAccountant.get_epsilon",
                     "dptrees.privacy.pld.pld_gaussian_budget",
                     "dptrees.audit.AuditResult.assert_within",
                     "dptrees.model_selection.DPRandomSearch.score",
                     "dptrees.preprocessing.PublicSchemaEncoder.transform"):
        assert expected in names, expected


@pytest.mark.parametrize("name, func, is_init", PUBLIC_CALLABLES,
                         ids=[name for name, _, _ in PUBLIC_CALLABLES])
def test_public_api_is_annotated(name, func, is_init):
    hints = typing.get_type_hints(func)  # raises if an annotation does not resolve
    params = list(inspect.signature(func).parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    missing = [p.name for p in params if p.name not in hints]
    assert not missing, f"{name}: parameters without an annotation: {missing}"
    if not is_init:
        assert "return" in hints, f"{name} has no return annotation"


def test_methods_that_return_self_say_so():
    from dptrees.accounting import PLDAccountant, RDPAccountant
    from dptrees.audit import AuditResult
    from dptrees.preprocessing import PublicSchemaEncoder

    for method in (RDPAccountant.compose_gaussian, RDPAccountant.compose_zcdp,
                   RDPAccountant.copy, PLDAccountant.compose_discrete_gaussian,
                   AuditResult.assert_within, PublicSchemaEncoder.fit):
        assert typing.get_type_hints(method)["return"] is typing.Self, method.__qualname__
