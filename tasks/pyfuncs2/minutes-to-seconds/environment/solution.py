def minutes_to_seconds(minutes):
    """Return how many seconds there are in `minutes` minutes.
    """
    raise NotImplementedError
