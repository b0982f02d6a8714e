def are_coprime(a, b):
    """Return True if the positive integers `a` and `b` are coprime: no integer greater than
    1 divides both of them. 1 is coprime to every number.
    """
    raise NotImplementedError
