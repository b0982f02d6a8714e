def text_justify_line(words, width):
    """Spread the words of the list `words` over exactly `width` characters: put the extra
    spaces between words as evenly as possible, with the leftmost gaps getting one more when
    it does not divide evenly. A single word is padded with spaces on the right. The words
    always fit with one space between them.
    """
    raise NotImplementedError
