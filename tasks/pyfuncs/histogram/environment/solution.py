def histogram(counts):
    """`counts` is a dict mapping labels (strings) to non-negative integers. Return one string
    per label, in sorted label order, of the form '<label>: ' followed by that many '#'
    characters.
    """
    raise NotImplementedError
