# SPDX-License-Identifier: MIT
"""The statistics of paired runs (the seed's method, bench/README.md): the gain of each
baseline/candidate pair, their median, and a percentile bootstrap interval of that median drawn
with a fixed seed, so that the same gains always give the same interval.

(Named stats, not statistics, so that it can never stand in for the standard library's module.)"""

import random
import statistics

RESAMPLES = 10000
BOOTSTRAP_SEED = 20240611


def gain(baseline_seconds, candidate_seconds):
    """(baseline time / candidate time - 1) * 100: positive when the candidate is faster."""
    return (baseline_seconds / candidate_seconds - 1.0) * 100.0


def paired_gains(baseline_seconds, candidate_seconds):
    """The gain of each pair; the two lists are the pairs' times in pair order."""
    if len(baseline_seconds) != len(candidate_seconds):
        raise ValueError("paired samples of different lengths: %d and %d" % (
            len(baseline_seconds), len(candidate_seconds)))
    return [gain(b, c) for b, c in zip(baseline_seconds, candidate_seconds)]


def median(values):
    return statistics.median(values)


def bootstrap_median_ci(values, resamples=RESAMPLES, seed=BOOTSTRAP_SEED):
    """Percentile 95% interval of the median, from `resamples` resamples drawn with a fixed seed:
    (low, high), or (None, None) without values."""
    if not values:
        return (None, None)
    if len(values) == 1:
        return (values[0], values[0])
    rng = random.Random(seed)
    n = len(values)
    medians = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    return (medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1])
