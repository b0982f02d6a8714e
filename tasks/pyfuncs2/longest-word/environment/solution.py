def longest_word(s):
    """Return the longest word of the string `s` (words are separated by whitespace); the
    first one on a tie; `''` when there is no word.
    """
    raise NotImplementedError
