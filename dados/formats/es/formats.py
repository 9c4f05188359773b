# Day and month without a leading zero, as a Spanish reader writes them by hand.
SHORT_DATE_FORMAT = "j/n/Y"
SHORT_DATETIME_FORMAT = "j/n/Y H:i"
