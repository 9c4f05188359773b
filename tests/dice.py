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


class Seeded:
    """A deterministic source. The server makes a source for every roll: all of them draw
    from one generator, which a test seeds (Seeded.reseed()) to get the same dice again."""

    SEED = 20261202
    generator = random.Random(SEED)

    def randint(self, low, high):
        return Seeded.generator.randint(low, high)

    @classmethod
    def reseed(cls):
        cls.generator.seed(cls.SEED)
