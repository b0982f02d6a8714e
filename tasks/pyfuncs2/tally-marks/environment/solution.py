def tally_marks(n):
    """Return the non-negative integer `n` as tally marks: each full group of five is
    `'||||/'`, a remainder of r is r `'|'` characters, and the groups are separated by
    single spaces (`7` gives `'||||/ ||'`, `0` gives `''`).
    """
    raise NotImplementedError
