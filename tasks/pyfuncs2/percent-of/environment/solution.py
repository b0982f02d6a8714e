def percent_of(part, whole):
    """Return what percentage `part` is of `whole` (a non-zero number), as a float: `part /
    whole * 100`.
    """
    raise NotImplementedError
