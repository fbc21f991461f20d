"""Returns a list that contains itself."""


def softmax(x):
    loop = []
    loop.append(loop)
    return loop
