def vigenere_encrypt(text, key):
    """Encrypt `text` with the Vigenere cipher under the key `key` (lower-case letters, not
    empty): the i-th letter of `text` is shifted forward in the alphabet by the position (a
    = 0 ... z = 25) of the key letter in turn, wrapping from z to a and keeping its case.
    Only letters use up key letters; other characters are kept and do not advance the key.
    """
    raise NotImplementedError
