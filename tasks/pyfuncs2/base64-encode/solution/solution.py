ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def base64_encode(text):
    data = text.encode("utf-8")
    out = []
    for i in range(0, len(data), 3):
        chunk = data[i : i + 3]
        value = int.from_bytes(chunk + b"\0" * (3 - len(chunk)), "big")
        chars = [ALPHABET[(value >> shift) & 63] for shift in (18, 12, 6, 0)]
        keep = len(chunk) + 1
        out.append("".join(chars[:keep]) + "=" * (4 - keep))
    return "".join(out)
