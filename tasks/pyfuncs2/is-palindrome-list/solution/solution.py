def is_palindrome_list(xs):
    return xs == xs[::-1]
