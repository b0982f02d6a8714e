def nato_spell(word):
    """Spell the word `word` with the NATO phonetic alphabet: each letter (either case)
    becomes its code word (Alfa, Bravo, Charlie, Delta, Echo, Foxtrot, Golf, Hotel, India,
    Juliett, Kilo, Lima, Mike, November, Oscar, Papa, Quebec, Romeo, Sierra, Tango, Uniform,
    Victor, Whiskey, X-ray, Yankee, Zulu), joined by single spaces. Characters that are not
    letters a-z are skipped.
    """
    raise NotImplementedError
