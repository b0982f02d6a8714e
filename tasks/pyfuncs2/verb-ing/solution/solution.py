def verb_ing(verb):
    if len(verb) > 2 and verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    return verb + "ing"
