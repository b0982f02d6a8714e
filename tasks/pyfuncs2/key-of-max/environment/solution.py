def key_of_max(d):
    """Return the key of the dict `d` whose value is largest; on a tie, the smallest key;
    `None` for an empty dict.
    """
    raise NotImplementedError
