def nonempty_lines(text):
    """Return how many lines of the string `text` contain something other than whitespace.
    """
    raise NotImplementedError
