def vote_result(votes_for, votes_against):
    """Return the string `yes` when `votes_for` is greater than `votes_against`, else `no`.
    """
    raise NotImplementedError
