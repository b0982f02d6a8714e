def decode_nested_repeat(s):
    """Decode `s`, where `k[text]` means `text` repeated `k` times (k is a positive integer,
    brackets may nest); letters outside brackets stay. `'3[a2[c]]'` gives `'accaccacc'`.
    """
    raise NotImplementedError
