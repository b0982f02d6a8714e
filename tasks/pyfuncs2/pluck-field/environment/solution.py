def pluck_field(records, field):
    """`records` is a list of dicts, each with the key `field`. Return the list of their
    values under `field`, in the order of the records.
    """
    raise NotImplementedError
