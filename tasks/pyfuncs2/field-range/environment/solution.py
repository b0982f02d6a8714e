def field_range(records, field):
    """Every dict of `records` stores a number under the key `field`. Find the lowest and
    the highest of these numbers and return them as `[lowest, highest]`; with no records
    there are none, so return `None`.
    """
    raise NotImplementedError
