def fib(n):
    """Return the n-th Fibonacci number, where fib(0) = 0, fib(1) = 1 and fib(n) = fib(n-1) +
    fib(n-2). It must be fast for n up to 90.
    """
    raise NotImplementedError
