def feet_to_inches(feet):
    return feet * 12
