def collatz_steps(n):
    """Starting from the integer `n >= 1`, repeatedly replace n by n / 2 if it is even or by 3n
    + 1 if it is odd, until it reaches 1. Return the number of steps taken (0 for n = 1).
    """
    raise NotImplementedError
