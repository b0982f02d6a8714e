def sort_ignore_case(words):
    """Return the strings of `words` sorted alphabetically ignoring case; words equal apart
    from case keep their order.
    """
    raise NotImplementedError
