def extract_hashtags(text):
    """Return the hashtags of the string `text` in order of appearance, lower-cased and
    without repeats: a hashtag is `#` followed by one or more letters, digits or underscores
    (the `#` is not included in the result).
    """
    raise NotImplementedError
