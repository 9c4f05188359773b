"""A write the app will not make, which the views answer with its message. A module of its
own, below the services, so that what they use (scorecards.once) may refuse too."""


class Refused(Exception):
    """A write the app will not make; the message is for the person at the table."""

    def __init__(self, message, status=400, reason=""):
        super().__init__(message)
        self.message = message
        self.status = status
        # For the phone's outbox (X-Dados-Refusal): "closed" when the card is finalized.
        self.reason = reason
