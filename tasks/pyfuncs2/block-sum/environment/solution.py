def block_sum(m, r1, c1, r2, c2):
    """Return the sum of the numbers of the matrix `m` (a list of rows) in rows `r1` to `r2`
    and columns `c1` to `c2`, all bounds included and counted from 0 (`r1 <= r2`, `c1 <=
    c2`, all inside the matrix).
    """
    raise NotImplementedError
