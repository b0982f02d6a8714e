def digit_at(n, k):
    """Return the decimal digit of the integer `n` at position `k` counted from the right,
    starting at 0 for the units digit (`k = 1` is the tens digit). The sign of `n` is
    ignored, and a position past the number's length gives 0.
    """
    raise NotImplementedError
