def scrabble_score(word):
    """Return the Scrabble score of the word `word` (letters in either case; other
    characters score 0): A E I O U L N S T R score 1, D G score 2, B C M P score 3, F H V W
    Y score 4, K scores 5, J X score 8, Q Z score 10.
    """
    raise NotImplementedError
