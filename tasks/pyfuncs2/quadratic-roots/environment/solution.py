def quadratic_roots(a, b, c):
    """Return the real roots of `a*x*x + b*x + c = 0` (`a` not zero) as a sorted list of
    floats: two roots, one root once when they coincide, or `[]` when there is no real root.
    """
    raise NotImplementedError
