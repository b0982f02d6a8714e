def count_syllables(word):
    groups = 0
    previous = False
    for c in word.lower():
        vowel = c in "aeiouy"
        if vowel and not previous:
            groups += 1
        previous = vowel
    if word.endswith("e") and groups > 1:
        groups -= 1
    if word and groups == 0:
        return 1
    return groups
