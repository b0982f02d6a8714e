from collections import Counter


def can_form_palindrome(s):
    return sum(n % 2 for n in Counter(s).values()) <= 1
