"""The pages, by screen: new (a new card), card (the card page and its live parts), writes
(what changes a card), history, players (statistics)."""
