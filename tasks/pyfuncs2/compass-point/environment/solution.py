def compass_point(degrees):
    """Return the nearest of the eight compass points (`'N'`, `'NE'`, `'E'`, `'SE'`, `'S'`,
    `'SW'`, `'W'`, `'NW'`) for the bearing `degrees` (0 is north, 90 east; any real number,
    taken modulo 360). Each point covers 45 degrees centred on it, and a bearing exactly on
    a boundary goes to the next point clockwise (22.5 gives `'NE'`).
    """
    raise NotImplementedError
