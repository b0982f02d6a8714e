def binary_palindrome(n):
    """Return `True` if the binary digits of the positive integer `n` (without leading
    zeros) read the same backwards, like `5` = `101`.
    """
    raise NotImplementedError
