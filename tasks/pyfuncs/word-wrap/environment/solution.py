def wrap(text, width):
    """Break `text` into lines of at most `width` characters and return them as a list. Fill
    each line greedily with whole words joined by single spaces; a word longer than `width`
    sits alone on its own line. Whitespace in `text` only separates words. Text without
    words gives [].
    """
    raise NotImplementedError
