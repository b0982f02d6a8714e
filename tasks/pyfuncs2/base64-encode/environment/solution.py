def base64_encode(text):
    """Return the standard Base64 encoding (alphabet `A-Z a-z 0-9 + /`, padded with `=`) of
    the UTF-8 bytes of the string `text`: every 3 bytes become 4 characters of 6 bits each;
    a last group of 1 or 2 bytes is filled with zero bits and followed by `'=='` or `'='`.
    """
    raise NotImplementedError
