def square_perimeter(side):
    return 4 * side
