import math


def mean_and_std(xs):
    mean = sum(xs) / len(xs)
    return [mean, math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))]
