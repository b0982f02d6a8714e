SMALL = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
VALUES = {w: i for i, w in enumerate(SMALL)} | {w: 20 + 10 * i for i, w in enumerate(TENS)}


def words_to_number(text):
    words = [w for w in text.replace("-", " ").split() if w != "and"]
    if not words:
        return None
    total = current = 0
    for w in words:
        if w in VALUES:
            current += VALUES[w]
        elif w == "hundred":
            current *= 100
        elif w in ("thousand", "million"):
            total += current * (1000 if w == "thousand" else 1000000)
            current = 0
        else:
            return None
    return total + current
