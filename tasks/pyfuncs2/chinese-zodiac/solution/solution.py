ANIMALS = ["Rat", "Ox", "Tiger", "Rabbit", "Dragon", "Snake", "Horse", "Goat", "Monkey", "Rooster", "Dog", "Pig"]


def chinese_zodiac(year):
    return ANIMALS[(year - 2020) % 12]
