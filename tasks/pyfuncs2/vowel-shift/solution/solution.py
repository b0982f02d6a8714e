def vowel_shift(s):
    nxt = {"a": "e", "e": "i", "i": "o", "o": "u", "u": "a"}
    nxt.update({k.upper(): v.upper() for k, v in nxt.items()})
    return "".join(nxt.get(c, c) for c in s)
