"""Static files storage for production: WhiteNoise's compressed, hashed files, with each
file's URL worked out once per process.

A page's template asks for seven static URLs (icons, stylesheet, scripts). The storage
reads its manifest once, when it is created, so a name's hashed URL cannot change while
the process runs; working it out again cost some 80 µs of every page (bench/RESULTS.md).
Only production uses it (settings: DEBUG off), so the URLs need not follow a change of
DEBUG or STATIC_URL at run time, as Django's own storage does for its tests.
"""

import functools

from whitenoise.storage import CompressedManifestStaticFilesStorage


class MemoizedManifestStaticFilesStorage(CompressedManifestStaticFilesStorage):
    def url(self, name, force=False):
        if force:
            return super().url(name, force=True)
        return self._hashed_url(name)

    @functools.cached_property
    def _hashed_url(self):
        # Per instance, so a storage built with another manifest keeps its own URLs. No
        # limit: a name missing from the manifest raises, and failures are not kept, so
        # the names remembered are the manifest's.
        return functools.cache(super().url)
