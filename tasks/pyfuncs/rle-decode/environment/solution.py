def rle_decode(s):
    """Decode a run-length encoded string: each count (one or more digits) is followed by one
    non-digit character that is repeated count times, e.g. '3a1b2c' -> 'aaabcc' and '12x' ->
    'xxxxxxxxxxxx'.
    """
    raise NotImplementedError
