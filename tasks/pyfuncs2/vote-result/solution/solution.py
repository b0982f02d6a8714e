def vote_result(votes_for, votes_against):
    return "yes" if votes_for > votes_against else "no"
