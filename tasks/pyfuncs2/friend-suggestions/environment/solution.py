def friend_suggestions(friends, person):
    """`friends` maps each person to the list of their friends (friendship goes both ways
    and is listed on both sides). Return the people who are friends of `person`'s friends
    but neither `person` nor already their friend, most shared friends first, equal counts
    by name ascending.
    """
    raise NotImplementedError
