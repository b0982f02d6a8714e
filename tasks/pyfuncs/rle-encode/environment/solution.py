def rle_encode(s):
    """Run-length encode the string `s`: each run of the same character becomes the run's
    length followed by the character, e.g. 'aaabcc' -> '3a1b2c'. The empty string encodes to
    ''.
    """
    raise NotImplementedError
