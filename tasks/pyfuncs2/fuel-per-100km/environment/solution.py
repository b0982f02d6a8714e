def fuel_per_100km(litres, km):
    """A car used `litres` litres of fuel to drive `km` kilometres. Return its consumption
    in litres per 100 kilometres rounded to 2 decimal places with `round`, or `None` if `km`
    is zero.
    """
    raise NotImplementedError
