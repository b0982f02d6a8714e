def parse_ints(text):
    """Return a list of the integers written in `text`, in order. An integer is a run of
    digits, optionally preceded directly by '-' (then it is negative).
    """
    raise NotImplementedError
