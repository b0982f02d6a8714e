def acronym(phrase):
    """Return the acronym of `phrase`: the first letter of each word, upper-cased. Words are
    separated by spaces or hyphens.
    """
    raise NotImplementedError
