def swap_halves(s):
    """Split the string `s` at index `len(s) // 2` and return the second part followed by
    the first (for an odd length the middle character belongs to the second part: `'abcde'`
    gives `'cdeab'`).
    """
    raise NotImplementedError
