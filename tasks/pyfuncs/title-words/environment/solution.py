def title_words(text):
    """Return `text` with every word capitalized: the first letter upper case, the rest lower
    case. Words are separated by whitespace; the result joins them with single spaces
    (leading and trailing whitespace is dropped).
    """
    raise NotImplementedError
