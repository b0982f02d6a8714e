def seconds_to_minutes(seconds):
    """Return how many whole minutes fit in `seconds` seconds (drop the remainder).
    """
    raise NotImplementedError
