def mean_and_std(xs):
    """Return `[mean, std]` of the non-empty number list `xs`, where `std` is the population
    standard deviation (divide by the count, not count - 1).
    """
    raise NotImplementedError
