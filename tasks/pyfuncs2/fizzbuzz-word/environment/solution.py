def fizzbuzz_word(n):
    """Return `'FizzBuzz'` if the positive integer `n` is divisible by both 3 and 5,
    `'Fizz'` if only by 3, `'Buzz'` if only by 5, and otherwise the number as a string.
    """
    raise NotImplementedError
