def feet_to_inches(feet):
    """Return the number of inches in `feet` feet (one foot is 12 inches).
    """
    raise NotImplementedError
