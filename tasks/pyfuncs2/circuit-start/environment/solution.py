def circuit_start(fuel, cost):
    """Stations `0 .. n-1` lie on a circle; at station `i` you can fill `fuel[i]` units, and
    driving on to the next station (`n-1` leads to 0) costs `cost[i]`. Starting empty,
    return the smallest station index from which you can drive once all the way around
    without the tank going below 0, or `-1` when none works.
    """
    raise NotImplementedError
