def vowel_words(words):
    return [w for w in words if w[:1].lower() in ('a', 'e', 'i', 'o', 'u')]
