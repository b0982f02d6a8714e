def is_right_triangle(a, b, c):
    """The positive integers `a`, `b` and `c` are the side lengths of a triangle, in any
    order. Return `True` if it has a right angle: the squares of the two shorter sides add
    up to the square of the longest.
    """
    raise NotImplementedError
