def values_of_keys(d, keys):
    """Return the list of the values the dict `d` holds under each key of the list `keys`,
    in the order of `keys`; a key that `d` does not have gives `None` at its place.
    """
    raise NotImplementedError
