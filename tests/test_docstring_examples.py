"""Every estimator's docstring documents each parameter (numpydoc), and its Examples run
and print what they show."""

import doctest

import pytest

import dptrees
from dptrees import federated

ESTIMATORS = [getattr(dptrees, name) for name in dptrees.__all__ if name.startswith("DP")]
ESTIMATORS += [federated.DPFederatedGradientBoostingClassifier,
               federated.DPFederatedGradientBoostingRegressor]


@pytest.mark.filterwarnings("ignore::dptrees.EarlyStopWarning")
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_the_examples_run(cls):
    for section in ("See Also", "References", "Examples"):
        assert f"\n    {section}\n" in cls.__doc__, section
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    test = parser.get_doctest(cls.__doc__, {}, cls.__name__, None, 0)
    assert len(test.examples) >= 3
    result = runner.run(test)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_documented(cls):
    validate = pytest.importorskip("numpydoc.validate").validate
    errors = validate(f"{cls.__module__}.{cls.__name__}")["errors"]
    undocumented = [message for code, message in errors if code in ("PR01", "PR02")]
    assert not undocumented
