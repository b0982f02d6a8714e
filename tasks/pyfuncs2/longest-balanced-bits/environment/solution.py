def longest_balanced_bits(bits):
    """`bits` is a list of 0s and 1s. Return the length of the longest stretch of
    neighbouring items that holds exactly as many 0s as 1s (0 when no non-empty stretch
    does).
    """
    raise NotImplementedError
