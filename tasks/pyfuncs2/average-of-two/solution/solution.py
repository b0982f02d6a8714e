def average_of_two(a, b):
    return (a + b) / 2
