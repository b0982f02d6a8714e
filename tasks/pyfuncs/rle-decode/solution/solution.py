def rle_decode(s):
    out = []
    count = ''
    for c in s:
        if c.isdigit():
            count += c
        else:
            out.append(c * int(count))
            count = ''
    return ''.join(out)
