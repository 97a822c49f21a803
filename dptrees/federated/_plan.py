"""The release plan of a federated fit: the aggregator's rounds, each recorded in the
ledger as it is made.

Each round releases the noisy sum of the sampled clients' clipped vectors: a
Poisson-subsampled discrete Gaussian mechanism whose L2 sensitivity is one client's
clipped vector, :meth:`~dptrees.federated.DPAggregator.sensitivity` (the clip norm plus
the fixed-point rounding), for add/remove-one-client neighbours (a
:class:`~dptrees.federated.LaplaceAggregator`'s round: discrete Laplace noise, the
vector clipped in L1). With an adaptive clip
the bound moves between rounds, so each round is recorded with the clip it was made at,
and the clip's own release (the noisy count of clients within the bound, sensitivity
1/2) beside it. The proof: "Privacy proofs, federated boosting" in the documentation.
"""

from dptrees.privacy.report import CLIENT, Ledger

__all__ = ["FederatedPlan"]

_MECHANISM = "subsampled discrete Gaussian"  # the adaptive clip's count


class FederatedPlan:
    """The door a federated fit's releases go through: it charges the fit's budget
    once (:meth:`charge`) and records every round as it is aggregated.

    Parameters
    ----------
    aggregator : DPAggregator
        Draws the noise, composes the rounds and holds the accountant.
    neighbours : str
        What one neighbour is (a client, or a record that is a client of its own).
    """

    def __init__(self, aggregator, neighbours):
        self.aggregator = aggregator
        self.neighbours = neighbours
        self._ledger = Ledger()

    def charge(self, accountant, label):
        """Spend the fit's ``(epsilon, delta)`` once, before the first round, from the
        accountant the aggregator was made with (``accountant``; ``label`` is the
        aggregator's own)."""
        self.aggregator.charge()

    def aggregate(self, contributions, dimension, label):
        """The round's noisy mean update (:meth:`DPAggregator.aggregate`), recorded in
        the ledger as ``label`` with the sensitivity and clip it is released at."""
        aggregator = self.aggregator
        sensitivity = aggregator.sensitivity(dimension)
        clip, clip_norm = aggregator.clip, aggregator.clip_norm
        noisy = aggregator.aggregate(contributions, dimension)
        self._ledger.record(label, aggregator.mechanism, sensitivity,
                            norm=f"L{aggregator.norm_ord}",
                            sampling_rate=aggregator.sampling_probability,
                            neighbours=self.neighbours, clip_norm=clip_norm,
                            **aggregator.ledger_details())
        if clip.adaptive:
            self._ledger.record(
                "adaptive clip: clients within the bound (centred count)", _MECHANISM, 0.5,
                norm="L2", neighbours=CLIENT,
                noise_multiplier=2.0 * clip.bit_noise_multiplier,
                sampling_rate=aggregator.sampling_probability,
                note="accounted jointly with the round's sum (Andrew et al. 2021)")
        return noisy

    def ledger(self):
        """The rounds released so far (``privacy_ledger_``)."""
        return self._ledger.entries()
