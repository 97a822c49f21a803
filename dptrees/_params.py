"""Declaring an estimator's parameters once: name, type, default and constraints.

A parameter is an annotated class attribute, ``n_bins: int = param(32, integers(2,
256))``. An estimator family declares its shared parameters on its base class and each
member (classifier, regressor) only what differs: a redeclared parameter keeps its place
and its constraints, and takes the new default (``noise_reg: float = 8.0``).

Every subclass of :class:`DeclaredParams` gets from its declarations

- scikit-learn's constructor: keyword-only, every argument stored unchanged as the
  attribute of the same name, validation left to ``fit`` (so ``get_params``, ``clone``
  and ``set_params`` work as for a hand-written ``__init__``; type checkers read the
  signature statically through :func:`typing.dataclass_transform`);
- ``_parameter_constraints``, scikit-learn's validation table, which
  :func:`dptrees._constraints.validate_params` checks at the start of ``fit``.
"""

import dataclasses
import typing
from typing import TYPE_CHECKING, Literal, TypeAlias

from dptrees._random import RandomStateLike

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dptrees.privacy.budget import BudgetAccountant

__all__ = ["Accountant", "Auto", "BinEdges", "Bounds", "Classes", "DeclaredParams",
           "RandomStateLike", "TargetBounds", "param", "positional"]

_CONSTRAINTS = "constraints"


def param(default, *constraints):
    """A parameter's default and what values it takes.

    Parameters
    ----------
    default : object
        The constructor's default (immutable: a number, a string, a tuple or None).
    *constraints : constraint or list of constraints
        scikit-learn's parameter constraints (see :mod:`dptrees._constraints`), lists
        flattened; ``PUBLIC`` alone (a public domain, checked against the data in
        ``fit``) means no validation here.
    """
    flat = []
    for constraint in constraints:
        flat.extend(constraint if isinstance(constraint, list) else [constraint])
    if flat == ["no_validation"]:
        flat = "no_validation"  # scikit-learn's spelling: a string, not a list
    return dataclasses.field(default=default, metadata={_CONSTRAINTS: flat})


def positional(*constraints):
    """A required parameter given by position (a meta-estimator's ``estimator``)."""
    field = param(None, *constraints)
    return dataclasses.field(kw_only=False, metadata=field.metadata)


def _declared_fields(cls):
    """The parameters ``cls``'s bases declare, by name (the last declaration wins, as in
    ``dataclasses``)."""
    fields = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(base.__dict__.get("__dataclass_fields__", {}))
    return fields


@typing.dataclass_transform(kw_only_default=True, eq_default=False,
                            field_specifiers=(param, positional))
class DeclaredParams:
    """Base of the estimators: their annotated class attributes are their parameters.

    The parameters of a class are its own annotated class attributes and those of its
    bases, in declaration order (a base's first); :func:`positional` makes one
    positional (a meta-estimator's ``estimator``). A class that writes its own
    ``__init__`` keeps it. Nothing else changes: scikit-learn's ``__repr__``, identity
    equality and hashing stay.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_parameter_constraints" in cls.__dict__:
            raise TypeError(f"{cls.__name__}: declare constraints with param(), not in "
                            "_parameter_constraints")
        inherited = _declared_fields(cls)
        for name in cls.__dict__.get("__annotations__", {}):
            value = cls.__dict__.get(name, dataclasses.MISSING)
            if isinstance(value, dataclasses.Field):
                continue
            if name not in inherited:
                raise TypeError(f"{cls.__name__}.{name}: a new parameter needs param() "
                                "with its constraints")
            # a new default for an inherited parameter keeps its constraints
            setattr(cls, name, dataclasses.field(default=value,
                                                 metadata=inherited[name].metadata))
        dataclasses.dataclass(cls, kw_only=True, eq=False, repr=False, match_args=False)
        cls._parameter_constraints = {
            field.name: field.metadata[_CONSTRAINTS] for field in dataclasses.fields(cls)}


# -- the types of the parameters every family shares ---------------------------------

Auto: TypeAlias = Literal["auto"]
#: ``bounds``: ``(lower, upper)`` scalars or per-feature arrays, or a schema dict
Bounds: TypeAlias = "tuple | dict | None"
#: ``y_bounds``: the public target range
TargetBounds: TypeAlias = "tuple[float, float] | None"
#: ``classes``: the public list of class labels
Classes: TypeAlias = "ArrayLike | None"
Accountant: TypeAlias = "BudgetAccountant | None"
BinEdges: TypeAlias = Literal["uniform", "private"]
