def evens_then_odds(xs):
    """Return the integers of `xs` with all even numbers first in ascending order, followed
    by all odd numbers in descending order.
    """
    raise NotImplementedError
