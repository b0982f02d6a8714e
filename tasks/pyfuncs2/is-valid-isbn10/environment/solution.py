def is_valid_isbn10(isbn):
    """Return True if the string `isbn` is a valid ISBN-10 once hyphens are removed: nine
    digits then a digit or `'X'` (worth 10; only in the last place), such that the sum of
    each digit times its weight, 10 for the first down to 1 for the last, is divisible by
    11.
    """
    raise NotImplementedError
