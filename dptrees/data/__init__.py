"""From a user's table to exact integer statistics: the public domains
(:mod:`~dptrees.data.domains`), data frames and schemas (:mod:`~dptrees.data.tables`) and
the public binning (:mod:`~dptrees.data.binning`)."""
