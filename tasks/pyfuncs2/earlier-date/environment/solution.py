def earlier_date(a, b):
    """The strings `a` and `b` are dates written `'YYYY-MM-DD'`. Return the one that comes
    first in time (either one when they are equal).
    """
    raise NotImplementedError
