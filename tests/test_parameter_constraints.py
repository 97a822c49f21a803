"""Parameter validation through scikit-learn's constraints (:mod:`dptrees._constraints`).

Every estimator declares ``_parameter_constraints`` for each of its parameters and checks
them first thing in ``fit``. scikit-learn's own ``check_param_validation`` (not part of
``parametrize_with_checks``) verifies that the constraints name exactly the parameters,
and that a value of a wrong type, or of the right type outside the allowed values, makes
``fit`` raise scikit-learn's ``InvalidParameterError`` naming the parameter. Beyond
scikit-learn: booleans are refused where a number is expected, a mistyped string option
gets the closest one, and nothing is spent on a refused parameter.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

import dptrees
from dptrees import BudgetAccountant
from dptrees.exceptions import PrivacyLeakWarning
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.model_selection import DPRandomSearch
from dptrees.preprocessing import PublicSchemaEncoder


def _estimators():
    classes = [getattr(dptrees, name) for name in sorted(dptrees.__all__)]
    classes = [c for c in classes if isinstance(c, type) and hasattr(c, "fit")]
    return classes + [DPFederatedGradientBoostingClassifier,
                      DPFederatedGradientBoostingRegressor]


ESTIMATORS = _estimators()


def _build(cls):
    return cls(accountant=BudgetAccountant(), random_state=0)


def test_every_estimator_is_covered():
    assert len(ESTIMATORS) == 13


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_scikit_learn_check_param_validation(cls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check_param_validation(cls.__name__, _build(cls))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_booleans_are_not_numbers_and_nothing_is_spent(cls):
    X = np.random.default_rng(0).random((40, 2))
    y = np.arange(40) % 2
    for name, constraints in cls._parameter_constraints.items():
        if constraints == "no_validation" or "boolean" in constraints:
            continue
        if not any(type(c).__name__ == "Interval" for c in constraints):
            continue
        acc = BudgetAccountant()
        est = cls(accountant=acc, random_state=0).set_params(**{name: True})
        with pytest.raises(InvalidParameterError,
                           match=rf"The '{name}' parameter of {cls.__name__} must be .*"
                                 r"Got True instead"):
            est.fit(X, y)
        assert acc.spent == (0.0, 0.0), name


def test_search_and_encoder_check_param_validation():
    search = DPRandomSearch(dptrees.DPDecisionTreeClassifier(), {"max_depth": [1, 2]},
                            accountant=BudgetAccountant(), random_state=0)
    encoder = PublicSchemaEncoder(schema=[(0.0, 1.0)] * 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check_param_validation("DPRandomSearch", search)
        check_param_validation("PublicSchemaEncoder", encoder)


def test_a_mistyped_option_gets_the_closest_one():
    est = dptrees.DPDecisionTreeRegressor(leaf="Mean", accountant=BudgetAccountant())
    with pytest.raises(ValueError, match=r"must be a str among .* Got 'Mean' instead\. "
                                         r"Did you mean 'mean'\?"):
        est.fit(np.zeros((3, 1)), np.zeros(3))
    # InvalidParameterError is a ValueError and a TypeError, as scikit-learn's
    assert issubclass(InvalidParameterError, ValueError)
    assert issubclass(InvalidParameterError, TypeError)


def test_infinite_numbers_are_refused():
    est = dptrees.DPDecisionTreeClassifier(prior_strength=np.inf, accountant=BudgetAccountant())
    with pytest.raises(InvalidParameterError, match=r"range \[0.0, inf\)\. Got inf"):
        est.fit(np.zeros((4, 1)), [0, 1, 0, 1])


@pytest.mark.parametrize("cls", [*ESTIMATORS, PublicSchemaEncoder], ids=lambda c: c.__name__)
def test_parameters_are_keyword_only(cls):
    # DPDecisionTreeClassifier(2) must not mean epsilon 2 while
    # DPGradientBoostingClassifier(2) means 2 trees: every parameter is named
    import inspect

    kinds = {p.kind for name, p in inspect.signature(cls.__init__).parameters.items()
             if name != "self"}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}
    with pytest.raises(TypeError, match="positional"):
        cls(1)
    search = inspect.signature(DPRandomSearch.__init__).parameters
    assert [n for n, p in search.items() if p.kind != p.KEYWORD_ONLY] == [
        "self", "estimator", "param_distributions"]  # as scikit-learn's searches


# -- declared parameters (dptrees._params) --------------------------------------------

def test_a_parameter_is_declared_once_with_its_constraints():
    from dptrees._params import DeclaredParams, param
    from dptrees._constraints import POSITIVE, integers

    class Base(DeclaredParams):
        rate: float = param(1.0, POSITIVE)
        depth: int = param(3, integers(1, 8))

    class Member(Base):
        rate: float = 0.5  # a new default keeps the constraint and the place

    assert list(inspect.signature(Member).parameters) == ["rate", "depth"]
    assert Member().rate == 0.5 and Base().rate == 1.0
    assert Member._parameter_constraints["rate"] == [POSITIVE]
    assert list(Member._parameter_constraints) == ["rate", "depth"]
    with pytest.raises(TypeError):
        Member(0.1)  # keyword-only
    with pytest.raises(TypeError, match="needs param"):
        class Unchecked(Base):
            width: int = 2
    with pytest.raises(TypeError, match="not in _parameter_constraints"):
        class Twice(Base):
            _parameter_constraints = {"rate": [POSITIVE]}


def test_twins_share_declarations_and_keep_their_defaults():
    from dptrees import DPGradientBoostingClassifier, DPGradientBoostingRegressor
    regressor = inspect.signature(DPGradientBoostingRegressor).parameters
    classifier = inspect.signature(DPGradientBoostingClassifier).parameters
    assert regressor["noise_reg"].default == 8.0 and classifier["noise_reg"].default == 3.0
    assert "y_bounds" in regressor and "classes" in classifier
    # the category order sorts categories by a binary target's rate: the classifier's own
    assert set(regressor) - {"y_bounds"} == set(classifier) - {
        "classes", "category_order", "order_budget"}
    search = inspect.signature(DPRandomSearch).parameters
    assert [p.kind for p in search.values()][:2] == [inspect.Parameter.POSITIONAL_OR_KEYWORD] * 2
