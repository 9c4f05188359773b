# The month in letters: an English reader takes 6/12/2026 for the 12th of June.
SHORT_DATE_FORMAT = "j M Y"
SHORT_DATETIME_FORMAT = "j M Y H:i"
