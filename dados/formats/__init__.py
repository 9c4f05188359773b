"""Date formats per language (settings.FORMAT_MODULE_PATH), over Django's own.

Templates write a short date as `date:"SHORT_DATE_FORMAT"` (or SHORT_DATETIME_FORMAT):
«6/12/2026» in Spanish, «6 Dec 2026» in English, whose readers take 6/12 for June."""
