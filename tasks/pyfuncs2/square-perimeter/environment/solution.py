def square_perimeter(side):
    """Return the perimeter of a square whose side is `side`.
    """
    raise NotImplementedError
