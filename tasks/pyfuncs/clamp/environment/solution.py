def clamp(x, low, high):
    """Return `x` limited to the range [low, high]: `low` if x is below it, `high` if x is
    above it, else `x`.
    """
    raise NotImplementedError
