def longest_vowel_run(s):
    best = run = 0
    for c in s.lower():
        run = run + 1 if c in "aeiou" else 0
        best = max(best, run)
    return best
