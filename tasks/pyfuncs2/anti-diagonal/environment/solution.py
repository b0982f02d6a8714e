def anti_diagonal(m):
    """`m` is a square matrix given as a list of rows. Return the items on its anti-
    diagonal, from the top-right corner to the bottom-left one: `m[0][n-1]`, `m[1][n-2]`,
    ... (an empty list for an empty matrix).
    """
    raise NotImplementedError
