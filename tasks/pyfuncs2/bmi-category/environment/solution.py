def bmi_category(weight_kg, height_m):
    """Compute `weight_kg / height_m ** 2` and return `'under'` if it is below 18.5,
    `'normal'` below 25, `'over'` below 30, else `'obese'`.
    """
    raise NotImplementedError
