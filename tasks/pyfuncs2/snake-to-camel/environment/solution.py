def snake_to_camel(s):
    """The string `s` is lower-case words joined by single underscores, like
    `'max_item_count'`. Return it in camelCase: the underscores removed and every word but
    the first starting with an upper-case letter (`'maxItemCount'`).
    """
    raise NotImplementedError
