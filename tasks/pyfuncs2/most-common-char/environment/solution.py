def most_common_char(s):
    """Return the letter that occurs most often in `s`, counted case-insensitively and
    returned in lower case; ignore anything that is not a letter; on a tie, the
    alphabetically first; `''` if there is no letter.
    """
    raise NotImplementedError
