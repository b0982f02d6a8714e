def chain_of_command(boss, name):
    chain = [name]
    while chain[-1] in boss:
        chain.append(boss[chain[-1]])
    return chain
