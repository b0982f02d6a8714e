def count_stretches_with_sum(xs, target):
    """Return how many non-empty stretches of neighbouring items of the integer list `xs`
    (`xs[i:j]` with `i < j`) add up to exactly `target`. Numbers may be negative or zero, so
    stretches can overlap and nest.
    """
    raise NotImplementedError
