def histogram(counts):
    return [f'{label}: ' + '#' * counts[label] for label in sorted(counts)]
