def fair_candies(ratings):
    """Children stand in a row with the ratings `ratings`. Each child gets at least one
    candy, and a child whose rating is strictly higher than a neighbour's gets more candies
    than that neighbour (equal ratings need nothing). Return the smallest total number of
    candies (0 for no children).
    """
    raise NotImplementedError
