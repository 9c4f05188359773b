"""Static files as a phone receives them."""

from django.core.files.base import ContentFile
from rcssmin import cssmin
from rjsmin import jsmin
from whitenoise.storage import CompressedManifestStaticFilesStorage

# The app's own scripts and styles: their sources keep the comments written for the next
# engineer, which a phone's first load need not carry (vendored files come minified).
MINIFIED = {"js/": jsmin, "css/": cssmin}


class MinifiedStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's storage (hashed names, compressed copies), with the app's own JavaScript
    and CSS minified as collectstatic saves them. A file's hash still follows its source.
    The modules' imports name each other by their hashed names (Django's own rewriting), so
    a phone never mixes two releases' modules."""

    support_js_module_import_aggregation = True

    def _save(self, name, content):
        minify = next((m for folder, m in MINIFIED.items() if name.startswith(folder)), None)
        if minify is not None and name.endswith((".js", ".css")):
            content.seek(0)  # hashing it may have read it already
            content = ContentFile(minify(content.read().decode()).encode())
        return super()._save(name, content)
