def vigenere_encrypt(text, key):
    out = []
    k = 0
    for c in text:
        if c.isascii() and c.isalpha():
            base = ord("A") if c.isupper() else ord("a")
            shift = ord(key[k % len(key)]) - ord("a")
            out.append(chr((ord(c) - base + shift) % 26 + base))
            k += 1
        else:
            out.append(c)
    return "".join(out)
