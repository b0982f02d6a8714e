def is_valid_triangle(a, b, c):
    """Return True if three positive lengths `a`, `b`, `c` can be the sides of a triangle
    with positive area: each side must be strictly shorter than the sum of the other two. A
    zero or negative side gives False.
    """
    raise NotImplementedError
