"""Dice sources for tests: settings.DICE_SOURCE names a class, as secrets.SystemRandom."""

import random


class Scripted:
    """Rolls the faces queued in Scripted.faces, in order; fails loudly when they run out."""

    faces: list[int] = []

    def randint(self, low, high):
        assert Scripted.faces, "the test queued too few dice"
        face = Scripted.faces.pop(0)
        assert low <= face <= high
        return face


class Seeded(random.Random):
    """A deterministic source: the same seed, the same dice."""

    SEED = 20261202

    def __init__(self):
        super().__init__(self.SEED)
