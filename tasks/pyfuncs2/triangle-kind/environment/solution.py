def triangle_kind(a, b, c):
    """Classify the triangle with side lengths `a`, `b`, `c`: return `'invalid'` if any side
    is not positive or the two shorter sides together are not longer than the longest, else
    `'equilateral'` (all equal), `'isosceles'` (two equal) or `'scalene'`.
    """
    raise NotImplementedError
