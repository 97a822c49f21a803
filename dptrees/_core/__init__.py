"""The compiled core of dptrees: exact samplers, mechanisms and (later) the tree engine.

Nothing here validates its inputs beyond what memory safety needs; the public modules
(:mod:`dptrees.mechanisms`, the estimators) do that.
"""
