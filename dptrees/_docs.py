"""The sections every estimator's docstring ends with: See Also, References, Examples.

The examples run as doctests (``tests/test_docstring_examples.py``) on data shipped
with the package or drawn from a seeded generator, so what they show is what the code
does.
"""

from functools import cache
from importlib import resources
import tomllib

__all__ = ["REFERENCES", "estimator_doc", "target_domain_doc"]

REFERENCES = {
    "hoang2020": "V. Q. Hoang and N. D. Thuc, \"Differentially private regression tree and "
                 "forest\", HCMUE Journal of Science 17(12), 2020.",
    "diffpets": "L. Yang, Z. Chen and G. Xie, \"DiffPETs: differentially private "
                "extremely randomized trees\", Guangdong University of Technology.",
    "zhang_adaboost": "S. Zhang, Y. Dong, J. Xu and H. Wang, \"Differentially private "
                      "AdaBoost by objective perturbation\", North China University of "
                      "Science and Technology.",
    "geyer2017": "R. C. Geyer, T. Klein and M. Nabi, \"Differentially private federated "
                 "learning: a client level perspective\", NIPS 2017 workshop, "
                 "arXiv:1712.07557.",
    "nori2021": "H. Nori, R. Caruana, Z. Chen, J. Janardhan, \"Accuracy, interpretability, "
                "and differential privacy via explainable boosting\", ICML 2021.",
    "feldman2021": "V. Feldman and T. Zrnic, \"Individual privacy accounting via a Renyi "
                   "filter\", NeurIPS 2021.",
    "mcsherry2007": "F. McSherry and K. Talwar, \"Mechanism design via differential "
                    "privacy\", FOCS 2007.",
    "mironov2017": "I. Mironov, \"Renyi differential privacy\", CSF 2017.",
    "cesar2021": "M. Cesar and R. Rogers, \"Bounding, concentrating, and truncating: "
                 "unifying privacy loss composition for data analytics\", ALT 2021.",
}

_REGRESSION_DATA = """    >>> from dptrees.datasets import load_california_housing
    >>> X, y, names, bounds, y_bounds = load_california_housing()
"""
_CLASSIFICATION_DATA = """    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((2000, 3))
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
"""


_TARGET_DOMAINS = {
    "regression": ("""    y_bounds : (lower, upper) or None
        Public target bounds; None reads them from the data (``PrivacyLeakWarning``).
""", "    y_bounds_ : tuple\n"),
    "classification": ("""    classes : array-like or None
        The public list of classes; None reads it from the data (``PrivacyLeakWarning``).
""", "    classes_ : ndarray\n"),
}


def target_domain_doc(task, attributes_doc):
    """The end of a boosting estimator's docstring: its public target domain (``y_bounds``
    or ``classes``), then the Attributes section ``attributes_doc`` followed by the
    fitted domain."""
    parameter, attribute = _TARGET_DOMAINS[task]
    return f"{parameter}\n    Attributes\n    ----------{attributes_doc}{attribute}    "


def _indent_lines(lines):
    return "".join(f"    {line}\n" for line in lines)


@cache
def _sections():
    """Every estimator's See Also, References and Examples, by class name."""
    with resources.files("dptrees").joinpath("_estimator_docs.toml").open("rb") as file:
        return tomllib.load(file)


def estimator_doc(cls):
    """Class decorator: append the See Also (``[name, why]`` pairs), References (keys of
    :data:`REFERENCES`) and Examples sections that ``_estimator_docs.toml`` holds for
    ``cls`` to its docstring; the example's doctest lines follow the data set-up of its
    ``task`` ("regression" or "classification").

    The sections are data, kept together so that the estimators' cross-references can be
    read (and kept symmetric) in one place."""
    spec = _sections()[cls.__name__]
    data = _REGRESSION_DATA if spec["task"] == "regression" else _CLASSIFICATION_DATA
    parts = [cls.__doc__.rstrip(), "", "    See Also", "    --------"]
    parts += [f"    {name} : {why}" for name, why in spec["see_also"]]
    parts += ["", "    References", "    ----------"]
    parts += [f"    .. [{k}] {REFERENCES[key]}"
              for k, key in enumerate(spec["references"], start=1)]
    parts += ["", "    Examples", "    --------"]
    cls.__doc__ = "\n".join(parts) + "\n" + data + _indent_lines(
        spec["example"].strip("\n").splitlines())
    return cls
