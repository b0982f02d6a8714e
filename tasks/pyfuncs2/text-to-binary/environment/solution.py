def text_to_binary(text):
    """Return the ASCII string `text` in binary: each character's code as exactly 8 binary
    digits (with leading zeros), the groups separated by single spaces (`'Hi'` gives
    `'01001000 01101001'`). An empty string gives `''`.
    """
    raise NotImplementedError
