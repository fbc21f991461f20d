"""Never returns."""


def softmax(x):
    while True:
        pass
